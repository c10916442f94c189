// n8n's editor in headless Chromium (Debian's `chromium`, driven by puppeteer-core): a demo n8n
// whose owner is set up and logged in over REST (no human at the setup screen), n8n credentials
// created over REST, and a page already signed in. A missing Chromium fails loudly.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { ROOT, n8nInstall, n8nInstance } from './n8n.mjs';
import { ownerSession } from './owner-session.mjs';

/** The Chromium binary, installed from Debian by scripts/lib/browser-install.sh. */
export function chromiumPath() {
	return execFileSync('bash', [path.join(ROOT, 'scripts/lib/browser-install.sh')], {
		stdio: ['ignore', 'pipe', 'inherit'],
	})
		.toString()
		.trim();
}

/**
 * This package as n8n's community-package installer leaves it (<user folder>/.n8n/nodes/
 * node_modules/<name>): node types read `n8n-nodes-resilient-provider-call.*`, as in the
 * examples a user imports. dist/ is copied; its two runtime modules are linked from this checkout.
 */
function installPackage(home) {
	const pj = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
	const nodesDir = path.join(home, '.n8n/nodes');
	const pkgDir = path.join(nodesDir, 'node_modules', pj.name);
	mkdirSync(path.join(pkgDir, 'node_modules'), { recursive: true });
	cpSync(path.join(ROOT, 'dist'), path.join(pkgDir, 'dist'), { recursive: true });
	const { devDependencies, peerDependencies, ...installed } = pj;
	writeFileSync(path.join(pkgDir, 'package.json'), JSON.stringify(installed));
	for (const dep of Object.keys(pj.dependencies ?? {}))
		symlinkSync(path.join(ROOT, 'node_modules', dep), path.join(pkgDir, 'node_modules', dep));
	writeFileSync(
		path.join(nodesDir, 'package.json'),
		JSON.stringify({
			name: 'installed-nodes',
			private: true,
			dependencies: { [pj.name]: pj.version },
		}),
	);
}

/** n8n 2.41.1 started with this package, its owner set up; resolves with a REST client. */
export async function startEditorN8n() {
	const install = n8nInstall(2);
	const instance = n8nInstance(install, {
		extensions: null,
		env: { N8N_SECURE_COOKIE: 'false' },
	});
	installPackage(instance.home);
	const server = await instance.start();
	const base = `http://127.0.0.1:${server.port}`;
	// n8n answers "n8n is starting up" (not JSON) for a while after its port opens.
	for (let deadline = Date.now() + 120_000; ;) {
		const r = await fetch(`${base}/rest/settings`);
		if ((r.headers.get('content-type') ?? '').includes('json')) break;
		if (Date.now() > deadline) throw new Error(`n8n's REST API did not come up: ${await r.text()}`);
		await new Promise((ok) => setTimeout(ok, 500));
	}
	const { rest, cookie } = await ownerSession(base);
	return {
		base,
		server,
		instance,
		rest,
		cookie,
		/** An n8n credential of `type` named `name`; returns its id. */
		async credential(name, type, data) {
			return (await rest('POST', '/credentials', { name, type, data })).id;
		},
		stop: () => server.stop(),
	};
}

/** Headless Chromium with one page signed in to `n8n`. */
export async function openEditor(n8n, { width = 1440, height = 900 } = {}) {
	const browser = await puppeteer.launch({
		executablePath: chromiumPath(),
		headless: true,
		args: [
			'--no-sandbox',
			'--disable-dev-shm-usage',
			'--disable-gpu',
			`--window-size=${width},${height}`,
		],
	});
	const [page] = await browser.pages();
	await page.setViewport({ width, height });
	const [name, value] = n8n.cookie().split('=');
	await browser.setCookie({ name, value, domain: '127.0.0.1', path: '/' });
	page.setDefaultTimeout(20_000);
	return { browser, page };
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** A new workflow, then the workflow menu's Import → From file with `file`, as a user does. */
export async function importFromFile(page, n8n, file) {
	// The page's own load, then the app's menu: waiting for the network to idle timed out on a
	// busy 2-core machine (the editor keeps its push connection and fetches open).
	await page.goto(`${n8n.base}/workflow/new`, { waitUntil: 'domcontentloaded', timeout: 60_000 });
	await (
		await page.waitForSelector('[data-test-id=workflow-menu]', { visible: true, timeout: 60_000 })
	).click();
	await page.hover('[data-test-id=workflow-menu-item-import]');
	const item = await page.waitForSelector('[data-test-id=workflow-menu-item-import-from-file]', {
		visible: true,
	});
	const [chooser] = await Promise.all([page.waitForFileChooser(), item.click()]);
	await chooser.accept([file]);
	await page.waitForSelector('[data-test-id=canvas-node]');
	await pause(1000);
}

/** Opens node `name` (double-click on the canvas); resolves once its panel shows. */
export async function openNode(page, name) {
	const node = await page.waitForSelector(`[data-test-id=canvas-node][data-node-name="${name}"]`);
	await node.click({ count: 2 });
	await page.waitForSelector('[data-test-id=ndv] [data-test-id=node-parameters]');
	await pause(800);
}

/**
 * What the open node panel shows: every parameter label (its parameter name from `for`, its
 * visible text, and the text of its help tooltip, read by hovering the (?) icon), every notice's
 * text, and every credential picker's label and button text.
 */
export async function panelTexts(page) {
	const params = '[data-test-id=ndv] [data-test-id=node-parameters]';
	const labels = [];
	for (const label of await page.$$(`${params} label.n8n-input-label[for]`)) {
		if (!(await label.isVisible())) continue;
		await label.evaluate((e) => e.scrollIntoView({ block: 'center' }));
		const name = await label.evaluate((e) => e.getAttribute('for'));
		const text = await label.$eval('[class*=_title_]', (e) => e.textContent.trim());
		await label.hover();
		const icon = await label.$('[data-icon=circle-help]');
		let help = '';
		if (icon) {
			await icon.hover();
			await pause(700);
			help = await page.evaluate(() =>
				[...document.querySelectorAll('[data-reka-popper-content-wrapper]')]
					.filter(
						(w) => w.getAttribute('role') !== 'tooltip' && w.querySelector('[data-state$=open]'),
					)
					.map((w) => w.textContent.trim())
					.join(' '),
			);
			await page.mouse.move(0, 0);
			await pause(200);
		}
		labels.push({ name, text, help });
	}
	const notices = await page.$$eval(`${params} .notice`, (els) =>
		els
			.filter((e) => !e.querySelector('[data-test-id=credentials-label]'))
			.map((e) => e.textContent.trim()),
	);
	const credentials = await credentialPickers(page);
	return { labels, notices, credentials };
}

/** The open panel's credential pickers: each one's label and text (with its chosen credential). */
export const credentialPickers = (page) =>
	page.$$eval('[data-test-id=ndv] [data-test-id=node-credentials-slot]', (els) =>
		els.map((e) => ({
			label: e.querySelector('[data-test-id=credentials-label]')?.textContent.trim() ?? '',
			// The chosen credential sits in the picker's input; an empty picker offers "Connect to …".
			text: [e.textContent.trim(), ...[...e.querySelectorAll('input')].map((i) => i.value)].join(
				' ',
			),
		})),
	);

/**
 * The open panel's output, branch by branch as the output panel shows them: each branch tab's
 * title, and after clicking it, the `text` column of its table (an empty branch has none).
 */
export async function outputBranches(page) {
	const tabs = await page.$$(
		'xpath/.//*[@data-test-id="ndv"]//*[contains(@class, "tab") or @role="tab"][contains(., " Branch")][not(.//*[contains(@class, "tab") or @role="tab"])]',
	);
	const branches = [];
	for (const tab of tabs) {
		const title = (await tab.evaluate((e) => e.textContent)).replace(/\s+/g, ' ').trim();
		await tab.click();
		await pause(600);
		const texts = await page.evaluate(() => {
			const table =
				document.querySelector('[data-test-id=ndv-output-panel] table') ??
				document.querySelector('[data-test-id=output-panel] table');
			if (!table) return [];
			const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
			const col = heads.findIndex((h) => h === 'text' || h.startsWith('text'));
			if (col < 0) return [];
			return [...table.querySelectorAll('tbody tr')].map(
				(tr) => tr.children[col]?.textContent.trim() ?? '',
			);
		});
		branches.push({ title, texts });
	}
	return branches;
}

/** Click what `selector` finds once it is shown; found again if the page replaced it meanwhile. */
async function clickWhenShown(page, selector) {
	for (let tries = 1; ; tries++) {
		const el = await page.waitForSelector(selector, { visible: true });
		try {
			return await el.click();
		} catch (error) {
			if (tries >= 5) throw error;
		}
	}
}

/**
 * From a blank workflow, the node added as a user does: the canvas's add button, the node
 * creator's search, the node, then its action `action`; resolves once its panel shows (n8n adds a
 * Manual Trigger in front of it).
 */
export async function addNodeToBlankWorkflow(page, n8n, search, action) {
	await page.goto(`${n8n.base}/workflow/new`, { waitUntil: 'domcontentloaded', timeout: 60_000 });
	await (
		await page.waitForSelector('[data-test-id=canvas-add-button]', {
			visible: true,
			timeout: 60_000,
		})
	).click();
	const bar = await page.waitForSelector('[data-test-id=node-creator-search-bar]');
	await bar.type(search);
	// The creator re-renders its list while the search settles: an item found a moment before may
	// be replaced by then (puppeteer: "not clickable"). Found again, visible, it is the one shown.
	await clickWhenShown(
		page,
		`xpath/.//*[@data-test-id="node-creator-item-name"][contains(., "${search}")]`,
	);
	await clickWhenShown(page, `xpath/.//*[text()="${action}"]`);
	await page.waitForSelector('[data-test-id=ndv] [data-test-id=node-parameters]');
	await pause(1000);
}

/** The parameter names whose labels the open panel shows. */
export const panelParameterNames = (page) =>
	page.$$eval(
		'[data-test-id=ndv] [data-test-id=node-parameters] label.n8n-input-label[for]',
		(els) => els.filter((e) => e.offsetParent !== null).map((e) => e.getAttribute('for')),
	);

/**
 * Clicks the option `text` of the select that is open (its headline when it has a description).
 * The list is still sliding open, or scrolling to the chosen item, for a moment after it shows:
 * a click aimed while it moves lands on a neighbour (seen: "Query Auth" ticked for "OpenAI"), so
 * the option is brought into view and clicked only once it has stood still for two frames.
 */
export async function pickOption(page, text) {
	// An option's own text: its headline (options with a description), its first span (a
	// credential over its type), or the whole item.
	const option = await page
		.waitForFunction(
			(t) =>
				[...document.querySelectorAll('.el-select-dropdown li.el-select-dropdown__item')].find(
					(li) =>
						li.offsetParent &&
						[li.querySelector('.option-headline'), li.querySelector('span'), li].some(
							(e) => e?.textContent.replace(/\s+/g, ' ').trim() === t,
						),
				),
			{ timeout: 5_000 },
			text,
		)
		.catch(async () => {
			throw new Error(
				`no option "${text}" in the open list: ${JSON.stringify(await openOptions(page))}`,
			);
		});
	const li = option.asElement();
	await li.evaluate((e) => e.scrollIntoView({ block: 'nearest' }));
	await standingStill(li);
	await li.click();
	await pause(300);
}

/** Resolves once `handle`'s box is the same in two reads 100 ms apart (at most 5 s). */
async function standingStill(handle) {
	let last = null;
	for (let deadline = Date.now() + 5_000; Date.now() < deadline;) {
		const box = JSON.stringify(await handle.boundingBox());
		if (box === last) return;
		last = box;
		await pause(100);
	}
}

/** The texts of the open select's options (for a failure's message). */
const openOptions = (page) =>
	page.$$eval('.el-select-dropdown li.el-select-dropdown__item', (els) =>
		els.filter((li) => li.offsetParent).map((li) => li.textContent.replace(/\s+/g, ' ').trim()),
	);

/** The tags a multi-option parameter `name` of the open panel shows (its chosen options). */
const chosenTags = (page, name) =>
	page.$$eval(
		`[data-test-id=ndv] [data-test-id=parameter-input-${name}] .el-select__tags-text`,
		(els) => els.map((e) => e.textContent.trim()),
	);

/**
 * Sets a value as a user does, then reads it back, and sets it again (3 tries in all) while the
 * panel does not hold it: a click on a list still moving, or a re-render (a new kind shows other
 * fields), can swallow one. What the test set is then what the node holds.
 */
async function setUntilItReads(what, set, read, holds) {
	let got;
	for (let round = 0; round < 3; round++) {
		await set();
		got = await read();
		if (holds(got)) return;
	}
	throw new Error(`${what} reads ${JSON.stringify(got)}`);
}

/** The open panel's multi-option parameter `name` set to exactly `texts` (its tags), list closed. */
export async function chooseOptions(page, name, texts) {
	await setUntilItReads(
		name,
		async () => {
			const tags = await chosenTags(page, name);
			// A tag that is not wanted is unticked as it was ticked: by its option in the list.
			const flips = [
				...texts.filter((t) => !tags.includes(t)),
				...tags.filter((t) => !texts.includes(t)),
			];
			if (!flips.length) return;
			await page.click(`[data-test-id=ndv] [data-test-id=parameter-input-${name}]`);
			for (const text of flips) await pickOption(page, text);
			await page.keyboard.press('Escape');
			await pause(500);
		},
		() => chosenTags(page, name),
		(tags) => tags.length === texts.length && texts.every((t) => tags.includes(t)),
	);
}

/** The credential picker labelled "Credential for `type`" set to the credential `name`. */
export async function chooseCredential(page, type, name) {
	const picker = await page
		.waitForSelector(
			`xpath/.//*[@data-test-id="ndv"]//*[@data-test-id="node-credentials-slot"][.//*[@data-test-id="credentials-label"][normalize-space(.)="Credential for ${type}"]]//*[@data-test-id="node-credentials-select"]`,
		)
		.catch(async (e) => {
			const slots = (await credentialPickers(page)).map((c) => c.text);
			throw new Error(
				`no picker "Credential for ${type}"; the slots read ${JSON.stringify(slots)}`,
				{ cause: e },
			);
		});
	// The picker's input holds the chosen credential's name.
	await setUntilItReads(
		`Credential for ${type}`,
		async () => {
			await picker.click();
			await pause(400);
			await pickOption(page, name);
		},
		() => picker.$$eval('input', (els) => els.map((e) => e.value)),
		(values) => values.includes(name),
	);
}

/**
 * A row added to the fixed collection `collection` (its Add button) and filled as a user does, in
 * the order given: each of `fields` typed (name → text) or picked (name → { pick: option }), then
 * each of `options` added through the row's Options list (its label) and typed over its default.
 */
export async function addRow(page, collection, { fields, options = {} }) {
	const box = `[data-test-id=ndv] [data-test-id=fixed-collection-${collection}]`;
	const lastOf = async (sel) => (await page.$$(`${box} ${sel}`)).at(-1);
	const valueOf = async (name) =>
		(await lastOf(`[data-test-id=parameter-input-${name}] :is(input, textarea)`)).evaluate(
			(e) => e.value,
		);
	const settle = (name, want, set) =>
		setUntilItReads(
			`${collection} row field ${name}`,
			set,
			() => valueOf(name),
			(v) => v === want,
		);
	const typeInto = (name, text) =>
		settle(name, text, async () => {
			const field = await lastOf(`[data-test-id=parameter-input-${name}] :is(input, textarea)`);
			await field.click();
			await page.keyboard.down('Control');
			await page.keyboard.press('a');
			await page.keyboard.up('Control');
			await field.type(text);
			await pause(200);
		});
	const pickIn = (name, text) =>
		settle(name, text, async () => {
			await (await lastOf(`[data-test-id=parameter-input-${name}]`)).click();
			await pause(400);
			await pickOption(page, text);
		});
	await page.click(`${box} [data-test-id=fixed-collection-add]`);
	await pause(800);
	for (const [name, value] of Object.entries(fields))
		await (typeof value === 'string' ? typeInto(name, value) : pickIn(name, value.pick));
	for (const [name, { label, text }] of Object.entries(options)) {
		await (await lastOf('[data-test-id=collection-parameter-add]')).click();
		await pause(500);
		await pickOption(page, label);
		await pause(400);
		await typeInto(name, text);
	}
}

/** The values the fixed collection `collection`'s visible fields hold, in panel order. */
export const rowValues = (page, collection) =>
	page.$$eval(
		`[data-test-id=ndv] [data-test-id=fixed-collection-${collection}] :is(input, textarea)`,
		(els) => els.filter((e) => e.offsetParent && e.value).map((e) => e.value),
	);

/** The open panel's Execute step; resolves once the output panel shows the node's branches. */
export async function executeStep(page, firstBranch) {
	await page.click('[data-test-id=ndv] [data-test-id=node-execute-button]');
	await page.waitForFunction(
		(t) => document.querySelector('[data-test-id=ndv]')?.textContent.includes(t),
		{ timeout: 60_000 },
		firstBranch,
	);
	await pause(800);
}
