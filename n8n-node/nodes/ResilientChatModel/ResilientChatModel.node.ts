import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeType,
	type INodeTypeDescription,
	type ISupplyDataFunctions,
	type SupplyData,
} from 'n8n-workflow';
import { properties } from './description';
import { engineFor } from '../../lib/engineCache';
import { configError } from '../../lib/params';
import { itemStore, sharedStore, storeSettings } from '../../lib/store/open';
import { leaveSeats } from '../../lib/fleetSeats';
import { connectedModels } from '../../lib/chat/connected';
import { conversationsOf } from '../../lib/chat/conversations';
import { chatCall } from '../../lib/chat/modelCall';
import { readChatPlan } from '../../lib/chat/plan';
import { rootParser } from '../../lib/chat/rootParser';
import { takeOver } from '../../lib/chat/takeOver';
import { resilientChatModel } from '../../lib/chat/wrapper';

// A language-model sub-node supplies a model to a root node; it has no items to run as a tool.
// eslint-disable-next-line @n8n/community-nodes/node-usable-as-tool
export class ResilientChatModel implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Resilient Chat Model',
		name: 'resilientChatModel',
		icon: { light: 'file:resilientChatModel.svg', dark: 'file:resilientChatModel.dark.svg' },
		group: ['transform'],
		// Each minor version gathers a round's new defaults (docs/versions.md): a saved workflow
		// keeps what its version did.
		version: [1, 1.1, 1.2],
		defaultVersion: 1.2,
		subtitle: '={{$parameter["numberInputs"] + " models"}}',
		description:
			'A fallback chain of chat models with a shared breaker, cooldown and Retry-After: one chat model for an AI Agent or LLM chain',
		defaults: { name: 'Resilient Chat Model' },
		codex: {
			categories: ['AI'],
			subcategories: {
				AI: ['Language Models', 'Root Nodes'],
				'Language Models': ['Chat Models (Recommended)'],
			},
		},
		// The inputs follow "Number of Models" (as n8n's Model Selector does); the expression is a
		// string n8n evaluates, so it holds everything it needs.
		inputs: `={{ ((parameters) => Array.from({ length: Number(parameters.numberInputs) || 2 }, (_, k) => ({ type: 'ai_languageModel', displayName: 'Model ' + (k + 1), required: true, maxConnections: 1 })))($parameter) }}`,
		outputs: [NodeConnectionTypes.AiLanguageModel],
		outputNames: ['Model'],
		requiredInputs: 1,
		credentials: [
			{ name: 'redis', required: true, displayOptions: { show: { stateStore: ['redis'] } } },
			{ name: 'postgres', required: true, displayOptions: { show: { stateStore: ['postgres'] } } },
		],
		properties,
	};

	async supplyData(this: ISupplyDataFunctions, itemIndex = 0): Promise<SupplyData> {
		const node = this.getNode();
		const { models, names, routing, presented } = await connectedModels(this);
		const plan = readChatPlan(this, names, routing);
		// The wrapper outlives supplyData (the root node calls it later) and holds its engine.
		const engine = engineFor(node, plan.config, (e) =>
			configError(this as unknown as IExecuteFunctions, 0, plan, e),
		);
		const storeCfg = storeSettings(this);
		const shared = await sharedStore(this, storeCfg);
		for (const m of models) takeOver(m);
		const call = chatCall({
			ctx: this,
			engine,
			plan,
			shared,
			storeCfg,
			// The root node's item: its conversation's later rounds come through the same item.
			conversations: conversationsOf(`${this.getExecutionId()}:${node.name}:${itemIndex}`),
			// Where the answers go: the Answer Check reads them as the root's parser will.
			parser: rootParser(this),
		});
		return {
			response: resilientChatModel(call, models, presented),
			// n8n calls it once the root node is done with this model: as Call Chain at its end, this
			// process's share of a provider's fleet limit goes back at once where none of its calls
			// are out, instead of at its lease's end. It never fails the root node.
			closeFunction: async () => {
				try {
					const store = itemStore(shared, plan.scope, storeCfg, this.logger);
					await leaveSeats(
						engine,
						store,
						plan.requests.map((r) => r.name),
						this.logger,
					);
				} catch (error) {
					this.logger.warn(`resilient-provider-call: ${(error as Error).message}`);
				}
			},
		};
	}
}
