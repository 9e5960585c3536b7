/**
 * The power planner against whole judged runs on every design of PLANNER_DESIGNS (the unit test
 * checks one of each kind): the planner's power and the power 200 judged runs show, and whether
 * they are within 5 points. Exits 1 when one is not.
 *
 *   node --import tsx bench/analysis/power-planner-check.ts
 */
import { plannerAgainstJudged, PLANNER_DESIGNS } from "../../test/analysis/planner-against-judged.ts";

const percent = (value: number) => `${(100 * value).toFixed(1)}%`;
let off = 0;
for (const entry of PLANNER_DESIGNS) {
  const started = performance.now();
  const { predicted, measured } = plannerAgainstJudged(entry);
  const within = Math.abs(predicted - measured) <= 0.05 && predicted > 0.5;
  if (!within) off++;
  const { design, baseRate, rise, model } = entry;
  console.log(
    `${design.kind} ${design.clustersPerArm} × ${design.iterationsPerCluster}, ${design.tests} tests, ${baseRate} + ${rise}` +
      `${model ? `, upgrade ${JSON.stringify(model.upgrade)}` : ""}: planner ${percent(predicted)}, judged ${percent(measured)}` +
      ` — ${within ? "within 5 points" : "OFF"} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
}
console.log(`${PLANNER_DESIGNS.length - off} of ${PLANNER_DESIGNS.length} designs within 5 points`);
process.exitCode = off > 0 ? 1 : 0;
