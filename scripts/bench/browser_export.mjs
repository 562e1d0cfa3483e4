// One returns export in the browser (the release build behind nginx), timed
// from the click to the offered file. Prints: rows=<n> seconds=<s>
//   BASE_URL=… PREFIX=saltgen node scripts/bench/browser_export.mjs
import { openBrowser, prefixConfig, serveConfigFor, url } from '../../e2e/harness.mjs';

const PREFIX = process.env.PREFIX || 'saltgen';
const b = await openBrowser();
const { page } = await b.newPage({ acceptDownloads: true });
// Not useIndexPrefix: its page.route would hold up every page fetch.
await serveConfigFor(page, prefixConfig(PREFIX));
await page.goto(url('/?time=all&noisy=show'));
await page.locator('table.jobs tbody tr.job').first().waitFor({ timeout: 60000 });
await page.getByText('Export CSV').click();
await page.locator('select[name=export-kind]').selectOption('returns');
const t0 = Date.now();
await page.getByRole('button', { name: 'Start export' }).click();
await page.locator('a.download').waitFor({ timeout: 1800000 });
const seconds = (Date.now() - t0) / 1000;
const text = await page.locator('.export-done').textContent();
const timing = await page.locator('.export-timing').textContent();
// The app's own clock (the Start click to the file offered), as the Python
// script times itself; the wall clock here adds Playwright's click.
const took = Number(timing.match(/Took ([\d.]+) s/)[1]);
console.log(`rows=${text.match(/(\d+) rows/)[1]} seconds=${took} wall=${seconds.toFixed(2)}`);
console.error(`browser (${PREFIX}): ${timing}`);
await b.close();
