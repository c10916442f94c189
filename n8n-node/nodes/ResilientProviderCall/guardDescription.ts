// The guard's panel entries, kept apart so they plug into the node's newest version: the
// operations Check Provider and Report Outcome (version 2 and later; version 1 is unchanged),
// Report's own field, and which of the chain's fields Report hides (it reads the chain from its
// Check node, so the chain is set once).
import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

export const GUARD_FROM_VERSION = 2;

export const guardOperations: INodePropertyOptions[] = [
	{
		name: 'Check Provider',
		value: 'checkProvider',
		action: 'Check which provider may be called now',
		description:
			'Guard another node: pick the provider the breaker, cooldown and rate limit allow now, without calling it; outputs go (with a ticket) or deferred',
	},
	{
		name: 'Report Outcome',
		value: 'reportOutcome',
		action: 'Report the outcome of a guarded call',
		description:
			"Record the guarded node's result (its main output = success, its error output = failure) against the ticket of its Check Provider node",
	},
];

const reportFields: INodeProperties[] = [
	{
		displayName:
			'Connect Check Provider (go) → the guarded node (Settings: On Error → Continue (using error output)) → this node, from both of its outputs. The ticket is found through item pairing; the chain and its settings are the Check node’s.',
		name: 'reportNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { operation: ['reportOutcome'] } },
	},
	{
		displayName: 'Check Node',
		name: 'checkNode',
		type: 'string',
		default: '',
		placeholder: 'Check Provider',
		description:
			'Name of the Check Provider node whose tickets this node reports; empty: the nearest one before this node',
		displayOptions: { show: { operation: ['reportOutcome'] } },
	},
	{
		displayName: 'Ticket',
		name: 'ticket',
		type: 'json',
		default: '',
		description:
			'Empty: the ticket of the paired item at the Check node. Or a ticket object handed out by Check Provider (its _resilience.ticket), e.g. kept and reported later.',
		displayOptions: { show: { operation: ['reportOutcome'] } },
	},
];

/** Fields of the chain that Report Outcome reads from its Check node instead. */
const CHAIN_FIELDS = [
	'providers',
	'retryPolicy',
	'breaker',
	'itemConcurrency',
	'stateScope',
	'onExhaustion',
	'defaultValueJson',
	'resetProviders',
];

/** The node's properties with the guard added from GUARD_FROM_VERSION. */
export function withGuard(properties: INodeProperties[]): INodeProperties[] {
	const out: INodeProperties[] = [];
	for (const p of properties) {
		if (p.name === 'operation') {
			out.push(
				{ ...p, displayOptions: { show: { '@version': [1] } } },
				{
					...p,
					options: [...(p.options as INodePropertyOptions[]), ...guardOperations],
					displayOptions: { show: { '@version': [GUARD_FROM_VERSION] } },
				},
				...reportFields,
			);
			continue;
		}
		if (p.name === 'providers') {
			// Check Provider hands the URL to the guarded node (a Slack or OpenAI node needs none):
			// from version 2 it is optional in the panel; Call Chain still refuses an empty one.
			const v2 = {
				...p,
				options: (p.options as INodeProperties[]).map((o) => ({
					...o,
					values: ((o as { values?: INodeProperties[] }).values ?? []).map((f) =>
						f.name === 'url'
							? {
									...f,
									required: false,
									description:
										'Call Chain calls it (required). Check Provider hands it to the guarded node as provider.url (optional).',
								}
							: f,
					),
				})),
			} as INodeProperties;
			out.push(
				{ ...p, displayOptions: { show: { '@version': [1] } } },
				{
					...v2,
					displayOptions: {
						show: { '@version': [GUARD_FROM_VERSION] },
						hide: { operation: ['reportOutcome'] },
					},
				},
			);
			continue;
		}
		if (CHAIN_FIELDS.includes(p.name)) {
			const hide = { ...(p.displayOptions?.hide ?? {}), operation: ['reportOutcome'] };
			out.push({ ...p, displayOptions: { ...(p.displayOptions ?? {}), hide } });
			continue;
		}
		out.push(p);
	}
	return out;
}
