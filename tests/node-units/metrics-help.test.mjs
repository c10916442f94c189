// Get Metrics' `# HELP` lines are the node's (the engine renders `# TYPE` lines only, its help
// texts generated into engineConstants.ts): every family the engine renders gets its help line
// just before its type line, as Prometheus' text format and `promtool check metrics` want it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { withHelp } = require('../../dist/lib/metrics.js');
const { engineModule } = require('../../dist/lib/engine.js');
const { METRIC_HELP } = require('../../dist/lib/engineConstants.js');

test('each family the engine renders gets its help line just before its type line', () => {
	const text = withHelp(engineModule().storeDownMetrics('wf'));
	const lines = text.split('\n');
	const types = lines.flatMap((l, i) => (l.startsWith('# TYPE ') ? [i] : []));
	assert.equal(types.length, 2, text);
	for (const i of types) {
		const name = lines[i].split(' ')[2];
		assert.equal(lines[i - 1], `# HELP ${name} ${METRIC_HELP[name]}`);
	}
	assert.match(text, /^# HELP resilient_provider_store_up Whether the shared state store answered/);
});

test('a family without a help text is left as the engine rendered it', () => {
	const text = '# TYPE other_total counter\nother_total 1\n';
	assert.equal(withHelp(text), text);
});
