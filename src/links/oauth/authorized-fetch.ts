import type { AuthTries, UpstreamAuth } from '../../contracts/upstream.js';

/**
 * A fetch that carries the bridge's OAuth credentials: the header on every
 * request, and on a 401 (or a 403 insufficient_scope) the flow, then the same
 * request again. For the fetch-shaped paths (the http+sse link, the start-up
 * probe); node:http requests get the same from `UpstreamRequest.auth`.
 */
export function authorizedFetch(auth: UpstreamAuth, base: typeof fetch = globalThis.fetch, renew?: () => AbortSignal): typeof fetch {
  return async (input, init) => {
    const tries: AuthTries = { unauthorized: 0, stepUps: 0 };
    let signal = init?.signal ?? undefined;
    for (;;) {
      const sent = await auth.header();
      const headers = new Headers(init?.headers);
      if (sent !== undefined) headers.set('authorization', sent);
      // A per-step deadline (the probe's) that ran out while the user was in the browser starts again for the retry.
      if (signal?.aborted && tries.unauthorized + tries.stepUps > 0 && renew) signal = renew();
      const res = await base(input, { ...init, headers, signal });
      const wwwAuthenticate = res.headers.get('www-authenticate') ?? undefined;
      if (res.status !== 401 && !(res.status === 403 && wwwAuthenticate?.includes('insufficient_scope'))) return res;
      await res.body?.cancel().catch(() => undefined);
      if (!(await auth.challenged({ status: res.status, wwwAuthenticate }, sent, tries))) return new Response(null, { status: res.status, headers: res.headers });
    }
  };
}
