// Every scenario a requirement set names must be accounted for in each run of
// its revision and leg: run, or listed as `skip` in the run's baseline. A
// baseline line about a scenario that neither ran nor is required is a typo or
// a leftover, and is reported the same way.

/**
 * `required`: scenario names the set expects; `ran`: names with a result;
 * `entries`: the parsed baseline. Returns `{ missing, unknown }`: required
 * scenarios neither run nor skipped, and baseline entries about scenarios
 * that are neither required nor ran.
 */
export function completeness({ required, ran, entries }) {
  const ranSet = new Set(ran);
  const requiredSet = new Set(required);
  const skip = new Set(entries.filter((e) => e.excuse === 'skip').map((e) => e.scenario));
  const missing = [...requiredSet].filter((s) => !ranSet.has(s) && !skip.has(s));
  const unknown = entries.filter((e) => !requiredSet.has(e.scenario) && !ranSet.has(e.scenario));
  return { missing, unknown };
}
