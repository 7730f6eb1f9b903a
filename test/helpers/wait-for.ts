/**
 * Polls `pred` every 10 ms until it returns something other than undefined; rejects after `ms`,
 * naming `what` did not happen when given.
 */
export function waitFor<T>(pred: () => T | undefined, ms = 5_000, what?: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + ms;
    const tick = () => {
      const v = pred();
      if (v !== undefined) return resolve(v);
      if (Date.now() > deadline) return reject(new Error(what === undefined ? 'condition not met in time' : `not seen within ${ms} ms: ${what}`));
      setTimeout(tick, 10);
    };
    tick();
  });
}
