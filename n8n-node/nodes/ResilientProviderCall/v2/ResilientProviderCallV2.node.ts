// Version 2: the lean panel (settings shown only where they apply, per-provider Options, titled
// provider rows), n8n's own credentials per provider, and LLM presets answering in one shape.
import {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeBaseDescription,
	INodeTypeDescription,
	NodeConnectionTypes,
} from 'n8n-workflow';
import { properties } from './properties';
import { credentials } from './credentials';
import { executeNode } from '../execute';
import { withGuard } from '../guardDescription';
import { guardNode, isGuardOperation } from '../../../lib/guard/operations';

export class ResilientProviderCallV2 implements INodeType {
	description: INodeTypeDescription;

	constructor(baseDescription: INodeTypeBaseDescription) {
		this.description = {
			...baseDescription,
			// Each minor version gathers a round's new defaults (docs/versions.md): a saved workflow
			// keeps what its version did.
			version: [2, 2.1, 2.2],
			defaults: { name: 'Resilient Provider Call' },
			usableAsTool: true,
			inputs: [NodeConnectionTypes.Main],
			outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main, NodeConnectionTypes.Main],
			outputNames: ['success', 'deferred', 'failed'],
			credentials,
			properties: withGuard(properties),
		};
	}

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const operation = this.getNodeParameter('operation', 0, 'callChain');
		if (isGuardOperation(operation)) return guardNode(this, operation);
		return executeNode.call(this, this.getNode().typeVersion);
	}
}
