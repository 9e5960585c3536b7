/*
 * netstress-spawner: starts the runner's test processes from a process of a few hundred kilobytes
 * instead of the runner's own (forking a 100+ MB Node process copies its page tables, which costs
 * more than the no-op test itself). One long-lived instance per run: a child of the runner speaking
 * on its stdin and stdout, or, in a build-farm pod, PID 1 of a container of its own
 * (`--listen PATH`), so that the tests run out of reach of the runner, its record stream and its key.
 *
 * Usage: netstress-spawner                 requests on stdin, replies on stdout
 *        netstress-spawner --listen PATH [--accept-timeout SECONDS]
 *   creates a Unix stream socket at PATH (mode 0600; a stale socket there is replaced, anything
 *   else is refused), accepts exactly one connection (no more are taken) and speaks the protocol
 *   over it. No connection within SECONDS (default 600) ends it with a message and exit 0: a runner
 *   that failed before connecting leaves no pod running until its deadline.
 *
 * Protocol (version 2). Requests, one after the other:
 *   "spawn ID UID GID ARGC ENVC BYTES\n" then BYTES bytes of NUL-terminated strings:
 *   cwd (empty: inherit), file, ARGC arguments (argv[0] first), ENVC "NAME=value" entries.
 *   UID/GID -1: keep the spawner's. Arguments are passed to execve verbatim: no shell, no quoting.
 *   A request over REQUEST_BYTES_MAX bytes or STRINGS_MAX strings is refused with "fail ID E2BIG"
 *   (its body is read and dropped), one whose counts do not fit its bytes with "fail ID EINVAL".
 *   "kill ID SIGNAL\n": signals test ID's process group (an unknown or ended ID is ignored). The
 *   runner cannot do it itself across containers: their PID namespaces differ.
 * Replies, "ready 2\n" first:
 *   "pid ID PID\n"           forked, in a new process group PID, stdin /dev/null (sent within 10 ms)
 *   "fail ID ERRNO\n"        could not be started (fork, chdir, setgid, setuid or execve failed)
 *   "out ID FD LEN\n" + LEN bytes   output of the test on its stdout (1) or stderr (2)
 *   "exit ID CODE SIGNAL\n"  it exited (CODE -1 when killed by SIGNAL), both its outputs ended, and
 *                            whatever was left in its process group got SIGKILL
 * The end of the requests (end of stdin, or of the connection) kills every running test's process
 * group with SIGKILL and ends the spawner with exit 0; should the spawner die, its tests get
 * SIGKILL from the kernel (PR_SET_PDEATHSIG) and, in stdin mode, the runner kills their groups.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROTOCOL_VERSION 2
#define DEFAULT_ACCEPT_TIMEOUT_SECONDS 600
#define HEADER_MAX 256
/* execve takes at most a quarter of the stack limit, capped at 6 MiB, of strings and their
   pointers: a larger request could never start, and its counts would size the allocations here. */
#define REQUEST_BYTES_MAX ((size_t)8 << 20)
#define STRINGS_MAX ((size_t)1 << 20)

struct child {
  unsigned long id;
  pid_t pid;
  int fds[2]; /* stdout, stderr read ends; -1 once ended */
  int report;  /* the exec-failure pipe's read end, read once the test has ended */
  int exited;
  int status;
};

static pid_t spawner_pid;
/* Where requests come from and replies go: stdin and stdout, or both the accepted connection. */
static int in_fd = STDIN_FILENO, out_fd = STDOUT_FILENO;
static struct child *children;
static size_t nchildren, capchildren;

static void die(const char *what) {
  fprintf(stderr, "netstress-spawner: %s: %s\n", what, strerror(errno));
  exit(70);
}

/* Replies are gathered and written once per turn of the loop: fewer writes here, fewer reads in
   the runner. A "pid" reply alone waits up to PID_REPLY_DELAY_MS for company: a short test's
   pid, output and exit then reach the runner in one write, which wakes it once instead of twice.
   The runner signals a test by its id ("kill"), so it never waits for the pid to do so. */
#define PID_REPLY_DELAY_MS 10
static char *pending;
static size_t npending, cappending;
static int pending_urgent;         /* something besides "pid" replies is pending */
static struct timespec pid_since;  /* when the first "pid" reply of the pending ones was made */

static void kill_all_groups(void) {
  for (size_t i = 0; i < nchildren; i++) kill(-children[i].pid, SIGKILL);
}

static void flush(void) {
  const char *p = pending;
  while (npending > 0) {
    ssize_t n = write(out_fd, p, npending);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) { /* the runner is gone: so are its tests */
        kill_all_groups();
        exit(0);
      }
      die("write");
    }
    p += n;
    npending -= (size_t)n;
  }
  pending_urgent = 0;
}

static long ms_since(const struct timespec *t) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

static void write_all(const void *data, size_t len) {
  if (npending + len > cappending) {
    while (npending + len > cappending) cappending = cappending ? cappending * 2 : 1 << 16;
    pending = realloc(pending, cappending);
    if (!pending) die("realloc");
  }
  memcpy(pending + npending, data, len);
  npending += len;
  pending_urgent = 1;
  if (npending >= 1 << 18) flush();
}

static void reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void reply(const char *fmt, ...) {
  char line[HEADER_MAX];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  write_all(line, (size_t)n);
}

/* execvpe with the PATH of the test's own environment, as Node's spawn does. */
static void exec_file(const char *file, char **argv, char **envp) {
  if (strchr(file, '/')) {
    execve(file, argv, envp);
    return;
  }
  const char *path = "/usr/local/bin:/usr/bin:/bin";
  for (char **e = envp; *e; e++)
    if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
  int saved = ENOENT;
  char candidate[PATH_MAX];
  for (const char *p = path;; p++) {
    const char *end = strchrnul(p, ':');
    int n = snprintf(candidate, sizeof candidate, "%.*s%s%s", (int)(end - p), p, end == p ? "" : "/", file);
    if (n > 0 && (size_t)n < sizeof candidate) {
      execve(candidate, argv, envp);
      if (errno == EACCES) saved = EACCES;
      else if (errno != ENOENT && errno != ENOTDIR) saved = errno;
    }
    if (*end == '\0') break;
    p = end;
  }
  errno = saved;
}

/* In the forked child: never returns. */
static void start_child(pid_t spawner, int report, int out, int err, const char *cwd, long uid, long gid,
                        const char *file, char **argv, char **envp) {
  sigset_t none;
  sigemptyset(&none);
  /* Every other disposition is already the default (see main). */
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  setpgid(0, 0);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
      dup2(err, STDERR_FILENO) < 0)
    goto failed;
  if (*cwd && chdir(cwd) < 0) goto failed;
  if (uid >= 0 || gid >= 0) setgroups(0, NULL); /* fails harmlessly unless root, as in libuv */
  if (gid >= 0 && setgid((gid_t)gid) < 0) goto failed;
  if (uid >= 0 && setuid((uid_t)uid) < 0) goto failed;
  /* Set after the credentials change, which clears it: a test outlives no dead spawner. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != spawner) _exit(127);
  exec_file(file, argv, envp);
failed:;
  int code = errno;
  ssize_t ignored = write(report, &code, sizeof code);
  (void)ignored;
  _exit(127);
}

static char **take_strings(char **cursor, char *end, size_t count) {
  char **list = calloc(count + 1, sizeof *list); /* count <= STRINGS_MAX: spawn_request checked */
  if (!list) die("calloc");
  for (size_t i = 0; i < count; i++) {
    if (*cursor >= end) {
      free(list);
      return NULL;
    }
    list[i] = *cursor;
    *cursor += strlen(*cursor) + 1;
  }
  return list;
}

static void refuse(unsigned long id, int code, const char *why) {
  fprintf(stderr, "netstress-spawner: request %lu refused: %s\n", id, why);
  reply("fail %lu %d\n", id, code);
}

static void spawn_request(unsigned long id, long uid, long gid, size_t argc, size_t envc, char *body, size_t len) {
  if (len == 0 || body[len - 1] != '\0') {
    refuse(id, EINVAL, "its fields must end with NUL");
    return;
  }
  /* Every string takes at least its NUL, cwd and file included (counts are <= STRINGS_MAX here). */
  if (argc == 0 || argc + envc + 2 > len) {
    refuse(id, EINVAL, "its argument and environment counts do not fit its bytes");
    return;
  }
  char *cursor = body, *end = body + len;
  const char *cwd = cursor;
  cursor += strlen(cursor) + 1;
  const char *file = cursor < end ? cursor : "";
  cursor += strlen(file) + 1;
  char **argv = take_strings(&cursor, end, argc);
  char **envp = argv ? take_strings(&cursor, end, envc) : NULL;
  if (!argv || !envp || cursor != end) {
    free(argv);
    free(envp);
    refuse(id, EINVAL, "its argument and environment counts do not match its bytes");
    return;
  }
  int out[2], err[2], report[2];
  if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
    reply("fail %lu %d\n", id, errno);
    free(argv);
    free(envp);
    return;
  }
  pid_t pid = fork();
  if (pid == 0) start_child(spawner_pid, report[1], out[1], err[1], cwd, uid, gid, file, argv, envp);
  int fork_errno = errno;
  free(argv);
  free(envp);
  close(out[1]);
  close(err[1]);
  close(report[1]);
  if (pid < 0) {
    close(report[0]);
    close(out[0]);
    close(err[0]);
    reply("fail %lu %d\n", id, fork_errno);
    return;
  }
  /* Its group exists (set here as well as in the child) and the runner knows it within
     PID_REPLY_DELAY_MS: whatever happens next, the runner can kill the group. Whether the exec
     worked is read from the report pipe once the test has ended (a failed exec ends it at once):
     the pipe's closing at the exec does not wake the spawner for every test. */
  setpgid(pid, pid);
  int urgent = pending_urgent;
  if (npending == 0) clock_gettime(CLOCK_MONOTONIC, &pid_since);
  reply("pid %lu %d\n", id, (int)pid);
  pending_urgent = urgent;
  fcntl(report[0], F_SETFL, O_NONBLOCK);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  if (nchildren == capchildren) {
    capchildren = capchildren ? capchildren * 2 : 16;
    children = realloc(children, capchildren * sizeof *children);
    if (!children) die("realloc");
  }
  children[nchildren++] = (struct child){.id = id, .pid = pid, .fds = {out[0], err[0]}, .report = report[0]};
}

static void kill_request(unsigned long id, int sig) {
  if (sig < 1 || sig >= NSIG) {
    fprintf(stderr, "netstress-spawner: kill %lu: no signal %d\n", id, sig);
    return;
  }
  /* A test is listed until its exit is replied: once it has gone, its group may be another's. */
  for (size_t i = 0; i < nchildren; i++)
    if (children[i].id == id) kill(-children[i].pid, sig);
}

static void finish_if_done(size_t i) {
  struct child *c = &children[i];
  if (!c->exited || c->fds[0] >= 0 || c->fds[1] >= 0) return;
  /* Both ends of the report pipe have closed by now: the exec closed its end, or the child wrote
     why it could not exec and exited. */
  int code;
  ssize_t failed = read(c->report, &code, sizeof code);
  close(c->report);
  if (failed == (ssize_t)sizeof code) {
    reply("fail %lu %d\n", c->id, code); /* it never ran: its outputs held nothing of a test */
  } else {
    kill(-c->pid, SIGKILL); /* descendants that outlived it share its group */
    if (WIFSIGNALED(c->status)) reply("exit %lu -1 %d\n", c->id, WTERMSIG(c->status));
    else reply("exit %lu %d 0\n", c->id, WEXITSTATUS(c->status));
  }
  children[i] = children[--nchildren];
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (size_t i = 0; i < nchildren; i++) {
      if (children[i].pid != pid) continue;
      children[i].exited = 1;
      children[i].status = status;
      finish_if_done(i);
      break;
    }
  }
}

/* Reads what is there (a bounded amount per turn, so that a flooding test starves no other) and
   notices the end in the same turn, reaping at once: a short test's output and its exit then reach
   the runner in one reply, which wakes it once instead of three times. */
static void drain(size_t i, int which) {
  static char chunk[65536];
  struct child *c = &children[i];
  for (int reads = 0; reads < 16; reads++) {
    ssize_t n = read(c->fds[which], chunk, sizeof chunk);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n > 0) {
      reply("out %lu %d %zd\n", c->id, which + 1, n);
      write_all(chunk, (size_t)n);
      continue;
    }
    close(c->fds[which]);
    c->fds[which] = -1;
    if (c->fds[0] < 0 && c->fds[1] < 0 && !c->exited) reap();
    else finish_if_done(i);
    return;
  }
}

/* Bytes of a refused request's body still to come, dropped as they arrive. */
static size_t discarding;

/* Parses every complete request at the front of buf; returns the bytes consumed. */
static size_t handle_requests(char *buf, size_t len) {
  size_t used = 0;
  while (used < len) {
    if (discarding > 0) {
      size_t dropped = len - used < discarding ? len - used : discarding;
      discarding -= dropped;
      used += dropped;
      continue;
    }
    char *nl = memchr(buf + used, '\n', len - used);
    if (!nl) {
      if (len - used > HEADER_MAX) {
        fprintf(stderr, "netstress-spawner: request header longer than %d bytes\n", HEADER_MAX);
        exit(65);
      }
      break;
    }
    *nl = '\0';
    unsigned long id;
    long uid, gid;
    size_t argc, envc, bytes;
    int sig;
    char end;
    if (sscanf(buf + used, "kill %lu %d%c", &id, &sig, &end) == 2) {
      kill_request(id, sig);
      used += (size_t)(nl - (buf + used)) + 1;
      continue;
    }
    if (sscanf(buf + used, "spawn %lu %ld %ld %zu %zu %zu", &id, &uid, &gid, &argc, &envc, &bytes) != 6) {
      fprintf(stderr, "netstress-spawner: unknown request: %s\n", buf + used);
      exit(65);
    }
    size_t header = (size_t)(nl - (buf + used)) + 1;
    if (bytes > REQUEST_BYTES_MAX || argc > STRINGS_MAX || envc > STRINGS_MAX) {
      refuse(id, E2BIG, "more than 8 MiB of strings or 1048576 strings, which execve could never take");
      used += header;
      discarding = bytes;
      continue;
    }
    if (len - used - header < bytes) {
      *nl = '\n';
      break;
    }
    spawn_request(id, uid, gid, argc, envc, nl + 1, bytes);
    used += header + bytes;
  }
  return used;
}

static void usage(void) {
  fprintf(stderr, "usage: netstress-spawner [--listen PATH [--accept-timeout SECONDS]]\n");
  exit(64);
}

/* A socket at path that nobody listens on any more (a spawner before this one died there). */
static int is_stale_socket(const char *path, const struct sockaddr_un *addr) {
  struct stat st;
  if (lstat(path, &st) < 0) return errno == ENOENT ? 1 : 0;
  if (!S_ISSOCK(st.st_mode)) return 0;
  int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) die("socket");
  int refused = connect(probe, (const struct sockaddr *)addr, sizeof *addr) < 0 && errno == ECONNREFUSED;
  close(probe);
  if (refused && unlink(path) < 0 && errno != ENOENT) die("unlink");
  return refused;
}

/* Listens at path, accepts one connection and returns it; -1 when none came within the timeout. */
static int accept_one(const char *path, long timeout_seconds) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof addr.sun_path) {
    fprintf(stderr, "netstress-spawner: --listen %s: longer than a socket path may be (%zu bytes)\n", path,
            sizeof addr.sun_path - 1);
    exit(64);
  }
  strcpy(addr.sun_path, path);
  if (!is_stale_socket(path, &addr)) {
    fprintf(stderr, "netstress-spawner: --listen %s: something is there that is not a stale socket\n", path);
    exit(73);
  }
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) die("socket");
  /* Created 0600 (no window in which another user could connect first), then said so again. */
  mode_t old_mask = umask(0177);
  if (bind(listener, (const struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
  umask(old_mask);
  if (chmod(path, 0600) < 0) die("chmod");
  if (listen(listener, 1) < 0) die("listen");
  struct pollfd pfd = {.fd = listener, .events = POLLIN};
  struct timespec since;
  clock_gettime(CLOCK_MONOTONIC, &since);
  int conn = -1;
  for (;;) {
    long left = timeout_seconds * 1000 - ms_since(&since);
    if (left <= 0) break;
    int ready = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
    if (ready < 0 && errno != EINTR) die("poll");
    if (ready <= 0) continue;
    conn = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    if (conn >= 0) break;
    if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN) die("accept");
  }
  /* Exactly one runner: nobody else connects once it has. */
  close(listener);
  unlink(path);
  return conn;
}

int main(int argc, char **argv) {
  const char *listen_path = NULL;
  long accept_timeout = DEFAULT_ACCEPT_TIMEOUT_SECONDS;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
      listen_path = argv[++i];
    } else if (strcmp(argv[i], "--accept-timeout") == 0 && i + 1 < argc) {
      char *end;
      errno = 0;
      accept_timeout = strtol(argv[++i], &end, 10);
      if (errno || *end || end == argv[i] || accept_timeout < 1 || accept_timeout > 86400) usage();
    } else {
      usage();
    }
  }
  /* Whatever the runner left ignored is reset here once, not in every test's child. */
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  spawner_pid = getpid();
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0) die("sigprocmask");
  int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) die("signalfd");
  for (int fd = 0; fd <= 2; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
  if (listen_path) {
    int conn = accept_one(listen_path, accept_timeout);
    if (conn < 0) {
      fprintf(stderr, "netstress-spawner: no runner connected to %s within %ld s; ending\n", listen_path,
              accept_timeout);
      return 0;
    }
    in_fd = out_fd = conn;
  }
  reply("ready %d\n", PROTOCOL_VERSION);
  flush();

  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  struct pollfd *fds = NULL;
  size_t capfds = 0;
  int input_open = 1;
  if (!buf) die("malloc");
  while (input_open) {
    size_t want = 2 + 2 * nchildren;
    if (want > capfds) {
      capfds = want * 2;
      fds = realloc(fds, capfds * sizeof *fds);
      if (!fds) die("realloc");
    }
    fds[0] = (struct pollfd){.fd = in_fd, .events = POLLIN};
    fds[1] = (struct pollfd){.fd = sigfd, .events = POLLIN};
    for (size_t i = 0; i < nchildren; i++)
      for (int w = 0; w < 2; w++) fds[2 + 2 * i + w] = (struct pollfd){.fd = children[i].fds[w], .events = POLLIN};
    size_t polled = nchildren;
    int timeout = -1;
    if (npending > 0) {
      long waited = ms_since(&pid_since);
      if (pending_urgent || waited >= PID_REPLY_DELAY_MS) flush();
      else timeout = (int)(PID_REPLY_DELAY_MS - waited);
    }
    if (poll(fds, want, timeout) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    /* Output first, then exits: a child's last output is relayed before its exit line. */
    for (size_t i = polled; i-- > 0;)
      for (int w = 0; w < 2; w++)
        if (i < nchildren && fds[2 + 2 * i + w].revents && children[i].fds[w] == fds[2 + 2 * i + w].fd)
          drain(i, w);
    if (fds[1].revents) {
      struct signalfd_siginfo infos[16];
      while (read(sigfd, infos, sizeof infos) == (ssize_t)sizeof infos) {
      }
      reap();
    }
    if (fds[0].revents) {
      if (len == cap) {
        cap *= 2;
        buf = realloc(buf, cap);
        if (!buf) die("realloc");
      }
      ssize_t n = read(in_fd, buf + len, cap - len);
      if (n < 0 && errno != EINTR && errno != EAGAIN && errno != ECONNRESET) die("read");
      if (n == 0 || (n < 0 && errno == ECONNRESET)) input_open = 0;
      if (n > 0) {
        len += (size_t)n;
        size_t used = handle_requests(buf, len);
        memmove(buf, buf + used, len - used);
        len -= used;
      }
    }
  }
  flush();
  kill_all_groups();
  return 0;
}
