/**
 * Polls `pred` every 10 ms until it returns (or resolves to) something other than undefined or
 * false (a condition written as a boolean waits for true); rejects after `ms`, naming `what` did
 * not happen when given.
 */
export async function waitFor<T>(pred: () => T | undefined | false | Promise<T | undefined | false>, ms = 5_000, what?: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(what === undefined ? 'condition not met in time' : `not seen within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
