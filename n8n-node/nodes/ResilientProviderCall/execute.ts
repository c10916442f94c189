// What every version of the node runs: the operation it is set to (Call Chain, or one of the
// state operations), with a node-level error under continue-on-fail sent to `failed` item by
// item. Version differences are in reading the parameters.
import { IExecuteFunctions, INodeExecutionData, NodeOperationError } from 'n8n-workflow';
import { readItemPlan, configError, type NodeVersion } from '../../lib/params';
import { engineFor } from '../../lib/engineCache';
import { itemStore, sharedStore, storeSettings } from '../../lib/store/open';
import { readSecrets } from '../../lib/secrets';
import { runsAsTool, toolResult } from '../../lib/toolResult';
import { providerState, resetProviders } from '../../lib/operations';
import { providerMetrics } from '../../lib/metrics';
import { credentialSecrets, loadCredentials, type LoadedCredentials } from '../../lib/auth';
import { callChain } from './callChain';
import { nodeFailed } from '../../lib/errorItem';

export async function executeNode(
	this: IExecuteFunctions,
	version: NodeVersion,
): Promise<INodeExecutionData[][]> {
	try {
		return await operation.call(this, version);
	} catch (error) {
		// A node-level error (a bad parameter, credential or store setting); anything else (a
		// store or engine fault) reaches n8n as a NodeOperationError too.
		return nodeFailed(this, error);
	}
}

async function operation(
	this: IExecuteFunctions,
	version: NodeVersion,
): Promise<INodeExecutionData[][]> {
	const node = this.getNode();
	const secrets = await readSecrets(this);
	const op = this.getNodeParameter('operation', 0, 'callChain') as string;
	// Version 2: n8n's own credentials of the types the chain uses, read once per execution; their
	// secret values are hidden from outputs and errors like the named secrets.
	let credentials: LoadedCredentials = {};
	if (version >= 2 && op === 'callChain')
		credentials = await loadCredentials(
			this,
			(this.getNodeParameter('credentialTypes', 0, []) as string[]) ?? [],
		);
	const storeCfg = storeSettings(this);
	const shared = await sharedStore(this, storeCfg);
	// Get Metrics is version 2's (version 1 is frozen).
	const operations =
		version >= 2
			? ['callChain', 'getState', 'getMetrics', 'reset']
			: ['callChain', 'getState', 'reset'];
	if (!operations.includes(op)) {
		throw new NodeOperationError(
			node,
			`Node: "Operation" must be ${operations.slice(0, -1).join(', ')} or reset, got ${JSON.stringify(String(op).slice(0, 50))}`,
		);
	}
	if (op === 'callChain') {
		const hidden = { ...secrets, ...credentialSecrets(credentials) };
		const out = await callChain.call(this, {
			version,
			secrets,
			credentials,
			hidden,
			storeCfg,
			shared,
		});
		return runsAsTool(node) ? toolResult(out) : out;
	}
	// The state operations read the first item's chain: one answer for the node.
	const plan = readItemPlan(this, 0, version);
	const engine = engineFor(node, plan.config, (e) => configError(this, 0, plan, e));
	const store = itemStore(shared, plan.scope, storeCfg, this.logger);
	const items =
		op === 'getMetrics'
			? await providerMetrics(engine, store, plan)
			: op === 'getState'
				? await providerState(
						engine,
						store,
						plan,
						store.degraded ? 'memory (store unavailable)' : storeCfg.kind,
					)
				: await resetProviders(this, store, plan);
	return [items, [], []];
}
