import { DelayedError, type Job } from "bullmq";

/**
 * A long job's processor for a worker that may stop mid-job: when the work says "interrupted"
 * (this process is stopping), the job goes back on the queue, delayed a moment so that the next
 * worker takes it rather than this closing one.
 */
export function handOverWhenInterrupted<T>(
  work: (job: Job<T>) => Promise<"done" | "interrupted">,
): (job: Job<T>, token?: string) => Promise<void> {
  return async (job, token) => {
    if ((await work(job)) === "interrupted") {
      await job.moveToDelayed(Date.now() + 2_000, token);
      throw new DelayedError();
    }
  };
}
