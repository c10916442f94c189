// What operators load, checked as shipped (n8n-node/monitoring/): the Prometheus alerting rules
// by `promtool check rules` and, one unit test per alert, `promtool test rules`
// (tests/monitoring/alert-rules.test.yml); the Grafana dashboard against Grafana's own dashboard
// types (@grafana/schema, generated from the CUE schema Grafana validates dashboards with: Grafana
// publishes no JSON Schema of the classic dashboard model), unknown fields and wrong values
// included, and its queries on this package's metrics only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/n8n.mjs';

const RULES = path.join(ROOT, 'n8n-node/monitoring/alert-rules.yml');
const RULE_TESTS = path.join(ROOT, 'tests/monitoring/alert-rules.test.yml');
const DASHBOARD = path.join(ROOT, 'n8n-node/monitoring/grafana-dashboard.json');

/** Runs promtool (Debian's prometheus package, installed by scripts/lib/services.sh). */
function promtool(...args) {
	const r = spawnSync('promtool', args, { encoding: 'utf8' });
	assert.ok(!r.error, `promtool could not run (${r.error?.message}): install Debian's prometheus`);
	return r;
}

test('the shipped alerting rules pass promtool check rules, and each alert its unit test', () => {
	const check = promtool('check', 'rules', RULES);
	assert.equal(check.status, 0, check.stdout + check.stderr);
	const unit = promtool('test', 'rules', RULE_TESTS);
	assert.equal(unit.status, 0, unit.stdout + unit.stderr);
	const rules = readFileSync(RULES, 'utf8');
	const alerts = [...rules.matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
	const tested = new Set(
		[...readFileSync(RULE_TESTS, 'utf8').matchAll(/alertname: (\w+)/g)].map((m) => m[1]),
	);
	assert.equal(alerts.length, 6);
	assert.deepEqual(
		alerts.filter((a) => !tested.has(a)),
		[],
		'an alert without its unit test',
	);
	assert.equal([...rules.matchAll(/^ {10}runbook: /gm)].length, alerts.length, 'a runbook each');
});

/** The dashboard as a TypeScript literal checked against Grafana's types (their enums read as
 * the strings the JSON holds): tsc's output, '' when it passes. */
function typecheck(dashboard) {
	const dir = path.join(ROOT, 'node_modules/.cache/rpc-dashboard-check');
	mkdirSync(dir, { recursive: true });
	const file = path.join(dir, `check-${process.pid}.ts`);
	writeFileSync(
		file,
		[
			"import type { Dashboard } from '@grafana/schema/dist/types/raw/dashboard/x/types.gen';",
			'type Json<T> = T extends string ? `${T}` : T extends Array<infer U> ? Array<Json<U>> : T extends object ? { [K in keyof T]: Json<T[K]> } : T;',
			`export const dashboard = ${JSON.stringify(dashboard, null, 1)} satisfies Json<Dashboard>;`,
		].join('\n'),
	);
	const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
	try {
		execFileSync(
			process.execPath,
			[
				tsc,
				'--noEmit',
				'--strict',
				'--target',
				'es2022',
				'--module',
				'commonjs',
				'--moduleResolution',
				'node',
				file,
			],
			{ encoding: 'utf8' },
		);
		return '';
	} catch (e) {
		return String(e.stdout) || String(e);
	}
}

test("the dashboard is a Grafana dashboard by Grafana's own types; a field it does not know, or a wrong value, is refused", () => {
	const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
	assert.equal(typecheck(dashboard), '');
	const unknown = structuredClone(dashboard);
	unknown.panels[0].gridPosition = {};
	assert.match(typecheck(unknown), /gridPosition/);
	const wrong = structuredClone(dashboard);
	wrong.templating.list[0].type = 'prometheus-datasource';
	assert.match(typecheck(wrong), /VariableType/);
});

test("the dashboard reads this package's metrics only, through its datasource variable, in every panel named in the docs", () => {
	const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
	const vars = dashboard.templating.list;
	assert.deepEqual(
		vars.map((v) => [v.name, v.type]),
		[
			['datasource', 'datasource'],
			['scope', 'query'],
			['provider', 'query'],
		],
	);
	const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
	for (const p of dashboard.panels) {
		assert.equal(p.datasource.uid, '${datasource}', p.title);
		for (const t of p.targets) assert.equal(t.datasource.uid, '${datasource}', p.title);
	}
	const metrics = new Set(
		exprs.flatMap((e) => [...e.matchAll(/([a-z_:][a-z0-9_:]*)\{/g)].map((m) => m[1])),
	);
	assert.deepEqual(
		[...metrics].filter((m) => !m.startsWith('resilient_provider_')),
		[],
	);
	const docs = readFileSync(path.join(ROOT, 'docs/trigger-and-metrics.md'), 'utf8');
	for (const p of dashboard.panels)
		assert.ok(docs.includes(p.title), `docs name the panel "${p.title}"`);
});
