// The guard's panel entries, kept apart and added to version 2's properties (version 1 is
// frozen): the operations Check Provider and Report Outcome, Report's own fields, the chain's
// fields Check uses too, and those Report hides (it reads the chain from its Check node, so the
// chain is set once).
import type { INodeProperties, INodePropertyOptions, NodeParameterValue } from 'n8n-workflow';

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
		placeholder: 'e.g. Check Provider',
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

/** Version 2's chain settings that Check Provider uses too (Report Outcome reads its Check's). */
const CHECK_USES = ['retryPolicy', 'breaker'];
/** Fields of a provider row Check Provider hands to the guarded node, or uses (the overrides). */
const CHECK_ROW_FIELDS = ['url', 'headersJson', 'bodyJson', 'options'];

type Show = Record<string, NodeParameterValue[]>;

/** `p` shown under Check Provider as well as where it was (by `operation` or `/operation`). */
function alsoOnCheck(p: INodeProperties): INodeProperties {
	const show = p.displayOptions?.show as Show | undefined;
	if (!show) return p;
	const key = show.operation ? 'operation' : show['/operation'] ? '/operation' : undefined;
	if (!key || !show[key].includes('callChain')) return p;
	return {
		...p,
		displayOptions: {
			...p.displayOptions,
			show: { ...show, [key]: [...show[key], 'checkProvider'] },
		},
	};
}

/** Version 2's properties with the guard's operations and fields added. */
export function withGuard(properties: INodeProperties[]): INodeProperties[] {
	const out: INodeProperties[] = [];
	for (const p of properties) {
		if (p.name === 'operation') {
			out.push(
				{ ...p, options: [...(p.options as INodePropertyOptions[]), ...guardOperations] },
				...reportFields,
			);
			continue;
		}
		if (p.name === 'providers') {
			// Check Provider hands the URL to the guarded node (a Slack or OpenAI node needs none),
			// so the panel does not insist on it; Call Chain refuses an empty one when it runs.
			const rows = (
				p.options as { name: string; displayName: string; values: INodeProperties[] }[]
			).map((o) => ({
				...o,
				values: o.values.map((f) => {
					if (!CHECK_ROW_FIELDS.includes(f.name)) return f;
					const shown = alsoOnCheck(f);
					return f.name === 'url'
						? {
								...shown,
								required: false,
								description:
									'Call Chain calls it. Check Provider hands it to the guarded node as provider.url (optional there).',
							}
						: shown;
				}),
			}));
			const hide = { ...(p.displayOptions?.hide ?? {}), operation: ['reportOutcome'] };
			out.push({
				...p,
				options: rows,
				displayOptions: { ...(p.displayOptions ?? {}), hide },
			} as INodeProperties);
			continue;
		}
		if (CHECK_USES.includes(p.name)) {
			out.push(alsoOnCheck(p));
			continue;
		}
		if (p.name === 'stateScope') {
			const hide = { ...(p.displayOptions?.hide ?? {}), operation: ['reportOutcome'] };
			out.push({ ...p, displayOptions: { ...(p.displayOptions ?? {}), hide } });
			continue;
		}
		out.push(p);
	}
	return out;
}
