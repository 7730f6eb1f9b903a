import { spawn } from 'node:child_process';
import open from 'open';
import type { Logger } from '../../log.js';

/**
 * Shows the user where to authorize: the URL always goes to stderr (a
 * desktop client keeps the bridge's stderr in its log); then the command in
 * `BROWSER`, with the URL as its only argument, or the system's opener
 * (`open`), unless `--oauth-no-browser`.
 */
export function openAuthorizationUrl(url: URL, opts: { upstream: string; noBrowser: boolean; logger: Logger; env?: NodeJS.ProcessEnv }): void {
  const env = opts.env ?? process.env;
  process.stderr.write(`mcp-bridge: to authorize the bridge toward ${opts.upstream}, open this URL in a browser:\n  ${url.href}\n`);
  if (opts.noBrowser) return;
  const browser = env.BROWSER?.trim();
  if (browser) {
    // No shell: the URL is one argument whatever it contains.
    const child = spawn(browser, [url.href], { stdio: 'ignore', detached: true });
    child.once('error', (err) => opts.logger.warn('oauth.browser.failed', { browser, error: err.message }));
    child.unref();
    return;
  }
  open(url.href).then(
    (child) => {
      child.once('error', (err) => opts.logger.warn('oauth.browser.failed', { error: err.message }));
      child.unref();
    },
    (err: Error) => opts.logger.warn('oauth.browser.failed', { error: err.message }),
  );
}
