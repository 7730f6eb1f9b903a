#!/usr/bin/env node
// The browser of an OAuth flow, for tests: the bridge runs `$BROWSER <url>`;
// this GETs the authorization URL and follows every redirect, which ends at
// the bridge's loopback callback (the suite's and the tests' authorization
// servers approve at once). Exits 0 once the callback answered.
const [url] = process.argv.slice(2);
if (!url) {
  process.stderr.write('usage: follow-redirect-browser.mjs <authorization url>\n');
  process.exit(2);
}
try {
  const res = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(20_000) });
  await res.text();
  process.exit(res.ok ? 0 : 1);
} catch (err) {
  process.stderr.write(`follow-redirect-browser: ${err.message}\n`);
  process.exit(1);
}
