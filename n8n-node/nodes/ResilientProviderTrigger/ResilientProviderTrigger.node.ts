import { scopeName, type ScopeMode } from '../../lib/plan/scope';
import {
	INodeType,
	INodeTypeDescription,
	ITriggerFunctions,
	ITriggerResponse,
	NodeConnectionTypes,
	NodeOperationError,
} from 'n8n-workflow';
import { properties } from './description';
import { storeCredentials } from '../storeDescription';
import { readStoreSettings } from '../../lib/store/open';
import { openEventSource } from '../../lib/trigger/open';
import { triggerPayload } from '../../lib/trigger/payload';

export class ResilientProviderTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Resilient Provider Trigger',
		name: 'resilientProviderTrigger',
		icon: {
			light: 'file:resilientProviderTrigger.svg',
			dark: 'file:resilientProviderTrigger.dark.svg',
		},
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["events"].join(", ")}}',
		description:
			'Starts once per circuit breaker transition of Resilient Provider Call, across every worker and instance',
		defaults: { name: 'Resilient Provider Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: storeCredentials,
		properties,
	};

	async trigger(this: ITriggerFunctions): Promise<ITriggerResponse> {
		const node = this.getNode();
		const settings = readStoreSettings((n, d) => this.getNodeParameter(n, d), node);
		const scopeMode = String(this.getNodeParameter('stateScope', 'provider'));
		if (scopeMode !== 'provider' && scopeMode !== 'workflow')
			throw new NodeOperationError(
				node,
				`Node: "State Scope" must be provider or workflow, got ${JSON.stringify(scopeMode.slice(0, 50))}`,
			);
		const workflowId = String(this.getNodeParameter('scopeWorkflowId', '') ?? '').trim();
		if (scopeMode === 'workflow' && !workflowId)
			throw new NodeOperationError(
				node,
				'Node: "Workflow ID" is required for State Scope: One Workflow',
			);
		// The same scope names as the calling nodes (lib/params.ts).
		const scope = scopeName(scopeMode as ScopeMode, workflowId);
		const wanted = this.getNodeParameter('events', ['open', 'closed']) as string[];
		const bad = wanted.filter((e) => !['open', 'closed', 'half_open'].includes(e));
		if (!Array.isArray(wanted) || wanted.length === 0 || bad.length)
			throw new NodeOperationError(
				node,
				`Node: "Fire On" must list open, closed or half_open, got ${JSON.stringify(wanted).slice(0, 80)}`,
			);
		// Said on every start: the node cannot tell queue mode without reading the environment.
		if (settings.kind === 'memory')
			this.logger.info(
				'resilient-provider-trigger: the memory store: this trigger sees only the transitions made in its own n8n process; in queue mode, the workers run the executions, so it sees none of theirs (use Redis or Postgres)',
			);
		const manual = this.getMode() === 'manual';
		// Claimed per workflow: the instances of this workflow share the events; a manual test run
		// claims apart, from now on, so it never takes an event from the active workflow.
		const consumer = `n8n-workflow:${this.getWorkflow().id ?? 'unsaved'}${manual ? ':manual' : ''}`;
		const source = await openEventSource(this, settings, scope, consumer);
		let lastError = 0;
		await source.start(
			(event) => {
				const item = triggerPayload(event, scope, wanted);
				if (item) this.emit([[{ json: item }]]);
			},
			(e) => {
				if (Date.now() - lastError < 60_000) return;
				lastError = Date.now();
				this.logger.warn(
					`resilient-provider-trigger: reading transition events failed (${e.message}); retrying`,
				);
			},
			manual,
		);
		return { closeFunction: () => source.close() };
	}
}
