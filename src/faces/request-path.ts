/** The request target's path, query dropped, case kept ('' for an absolute-form target that is not a URL). */
export function requestPath(url: string | undefined): string {
  let path = url ?? '/';
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname; // absolute-form request target
    } catch {
      return '';
    }
  }
  const q = path.indexOf('?');
  return q >= 0 ? path.slice(0, q) : path;
}
