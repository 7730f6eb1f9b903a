/** A signal that aborts when any of its sources does, and the call that detaches it from them. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Removes the listeners from the sources; call it once the operation is over. */
  dispose(): void;
}

/**
 * `AbortSignal.any` for one call on the hot path: one controller and one
 * listener per source, removed by `dispose()`. `AbortSignal.any` costs ~40 µs
 * per call here (its sources keep weak references to every dependent signal,
 * which V8 sweeps later); with a single source, that source is returned as is.
 */
export function linkedSignal(sources: readonly AbortSignal[]): LinkedSignal {
  if (sources.length === 1) return { signal: sources[0], dispose: noop };
  const ac = new AbortController();
  const aborted = sources.find((s) => s.aborted);
  if (aborted) {
    ac.abort(aborted.reason);
    return { signal: ac.signal, dispose: noop };
  }
  const onAbort = function (this: AbortSignal): void {
    dispose();
    ac.abort(this.reason);
  };
  const dispose = (): void => {
    for (const s of sources) s.removeEventListener('abort', onAbort);
  };
  for (const s of sources) s.addEventListener('abort', onAbort);
  return { signal: ac.signal, dispose };
}

function noop(): void {}
