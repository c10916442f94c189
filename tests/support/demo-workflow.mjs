// README's demo: n8n-node/examples/demo-workflow.json pointed at the loopback providers, and the
// requests each provider logged (README's table: down 3, flaky 8, healthy 4).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './n8n.mjs';

export const DEMO_NODE = 'Resilient Provider Call';
export const DEMO_ROUTES = { '/always500': 'down', '/flaky-ra': 'flaky', '/ok': 'healthy' };

/** The example workflow, its URLs on `port`, its node of type `nodeType`. */
export function demoWorkflow(port, nodeType) {
	const template = readFileSync(path.join(ROOT, 'n8n-node/examples/demo-workflow.json'), 'utf8');
	const wf = JSON.parse(template.replaceAll('http://127.0.0.1:18700', `http://127.0.0.1:${port}`));
	wf.nodes.find((n) => n.name === DEMO_NODE).type = nodeType;
	return wf;
}

/** Requests per demo provider, from the providers' own arrival log. */
export function requestsAtProviders(arrivals) {
	const counts = { down: 0, flaky: 0, healthy: 0 };
	for (const a of arrivals) if (DEMO_ROUTES[a.route]) counts[DEMO_ROUTES[a.route]]++;
	return counts;
}
