/** Polls `pred` every 10 ms until it returns something other than undefined; rejects after `ms`. */
export function waitFor<T>(pred: () => T | undefined, ms = 5_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + ms;
    const tick = () => {
      const v = pred();
      if (v !== undefined) return resolve(v);
      if (Date.now() > deadline) return reject(new Error('condition not met in time'));
      setTimeout(tick, 10);
    };
    tick();
  });
}
