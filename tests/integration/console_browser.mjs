// tests/integration/console_browser.mjs: drives Debian's chromium (headless)
// through the console for tests/integration/test_console_browser.sh, with
// playwright-core (PLAYWRIGHT_CORE: its index.mjs).  One step per run, in a
// profile directory kept between runs (the session cookie persists):
//
//   node console_browser.mjs signin            sign in; the overview lists the destinations
//   node console_browser.mjs filter            /jobs filtered by status DEAD
//   node console_browser.mjs redrive JOB_ID    open the dead job, redrive it, reload until SUCCEEDED
//   node console_browser.mjs pause|resume DEST the overview's button for DEST
//   node console_browser.mjs shots             the phone-sized screenshots
//
// Environment: BASE (http://127.0.0.1:PORT), TOKEN, PROFILE (a fresh
// directory), SHOTS (where the PNGs go), DESTINATIONS (space-separated).
// Prints "ok - ..." per assertion; exits 1 at the first failure.
import fs from 'node:fs';

const { chromium } = await import(process.env.PLAYWRIGHT_CORE);
const [step, arg] = process.argv.slice(2);
const base = process.env.BASE;

function fail(what) {
	console.log(`not ok - ${what}`);
	process.exit(1);
}
function ok(cond, what) {
	if (!cond)
		fail(what);
	console.log(`ok - ${what}`);
}

const ctx = await chromium.launchPersistentContext(process.env.PROFILE, {
	executablePath: '/usr/bin/chromium',
	headless: true,
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
	       '--disable-background-networking', '--disable-component-update', '--disable-sync'],
	viewport: { width: 1280, height: 800 },
});
// Chromium writes its cookie store lazily: each run hands the session on
// to the next itself.
const jar = `${process.env.PROFILE}/cookies.json`;
if (fs.existsSync(jar))
	await ctx.addCookies(JSON.parse(fs.readFileSync(jar, 'utf8')));
const page = ctx.pages()[0] ?? await ctx.newPage();
page.setDefaultTimeout(15000);
const shot = async (name, full = true) =>
	page.screenshot({ path: `${process.env.SHOTS}/${name}.png`, fullPage: full });
// The pages need no script and the CSP forbids inline ones: a violation
// (or any script error) shows up as a console error.  The 401 of the first
// visit is expected and not one.
const errors = [];
page.on('console', (m) => {
	if (m.type() === 'error' && !m.text().includes('status of 401'))
		errors.push(m.text());
});

try {
	switch (step) {
	case 'signin': {
		const r = await page.goto(`${base}/`);
		ok(r.status() === 401, 'the overview without a session: 401');
		await page.click('a.signin');
		ok(page.url() === `${base}/login`, 'the sign-in link leads to /login');
		await shot('signin', false);
		await page.fill('input[name=name]', 'alice');
		await page.fill('input[name=token]', process.env.TOKEN);
		await Promise.all([page.waitForNavigation(), page.click('form.signin button')]);
		ok(page.url() === `${base}/`, 'signed in: back on the overview');
		const names = await page.$$eval('main table:first-of-type tbody tr td:first-child a',
		                                (as) => as.map((a) => a.textContent));
		for (const d of process.env.DESTINATIONS.split(' '))
			ok(names.includes(d), `the overview shows destination ${d}`);
		ok(await page.isVisible('svg.spark'), 'the overview shows jobs per minute');
		ok(await page.isVisible('text=Instances'), 'the overview shows the instances');
		// One relay-only and one consumer-only process run: each registers.
		for (const role of ['relay', 'consumer'])
			ok(await page.isVisible(`td:text-is("${role}")`), `the instances table shows the ${role}`);
		ok(await page.isVisible('text=sweeper'), 'the overview shows the sweeper');
		await shot('overview');
		break;
	}
	case 'filter': {
		await page.goto(`${base}/jobs`);
		await page.selectOption('select[name=status]', 'DEAD');
		await Promise.all([page.waitForNavigation(), page.click('form.filters button')]);
		ok(new URL(page.url()).searchParams.get('status') === 'DEAD', 'the filter is in the URL');
		const states = await page.$$eval('tbody tr td:nth-child(4)', (tds) => tds.map((t) => t.textContent));
		ok(states.length > 0, `the DEAD filter lists ${states.length} job(s)`);
		ok(states.every((s) => s.startsWith('DEAD')), 'every listed job is DEAD');
		await shot('jobs');
		break;
	}
	case 'redrive': {
		await page.goto(`${base}/dead`);
		await shot('dead');
		await Promise.all([page.waitForNavigation(), page.click(`a[href="/jobs/${arg}"]`)]);
		ok(await page.textContent('#job-status') === 'DEAD', 'the dead job\'s page says DEAD');
		ok(await page.isVisible('text=Last error'), 'the dead job\'s page shows its error');
		await shot('job-dead');
		await Promise.all([page.waitForNavigation(), page.click('button:has-text("Redrive")')]);
		ok(page.url() === `${base}/jobs/${arg}`, 'redrive leads back to the job');
		let status = await page.textContent('#job-status');
		for (let i = 0; i < 60 && status !== 'SUCCEEDED'; i++) {
			await page.waitForTimeout(500);
			await page.reload();
			status = await page.textContent('#job-status');
		}
		ok(status === 'SUCCEEDED', 'after a reload the redriven job is SUCCEEDED');
		await shot('job-succeeded');
		break;
	}
	case 'pause':
	case 'resume': {
		await page.goto(`${base}/`);
		const button = `form[action="/destinations/${arg}/${step}"] button`;
		await Promise.all([page.waitForNavigation(), page.click(button)]);
		const row = page.locator('tbody tr', { has: page.locator(`a[href="/jobs?destination=${arg}"]`) });
		const badge = await row.locator('.badge.paused').count();
		ok(step === 'pause' ? badge === 1 : badge === 0,
		   `the overview marks ${arg} ${step === 'pause' ? 'paused' : 'not paused'}`);
		if (step === 'pause')
			await shot('overview-paused');
		break;
	}
	case 'shots': {
		await page.setViewportSize({ width: 390, height: 844 });
		await page.goto(`${base}/`);
		await shot('overview-phone');
		await page.goto(`${base}/jobs`);
		await shot('jobs-phone', false);
		break;
	}
	default:
		fail(`unknown step "${step}"`);
	}
	ok(errors.length === 0, `no error in the browser's console${errors.length ? ': ' + errors.join('; ') : ''}`);
} finally {
	fs.writeFileSync(jar, JSON.stringify(await ctx.cookies()));
	await ctx.close();
}
