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

export class ResilientProviderCallV2 implements INodeType {
	description: INodeTypeDescription;

	constructor(baseDescription: INodeTypeBaseDescription) {
		this.description = {
			...baseDescription,
			version: 2,
			defaults: { name: 'Resilient Provider Call' },
			usableAsTool: true,
			inputs: [NodeConnectionTypes.Main],
			outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main, NodeConnectionTypes.Main],
			outputNames: ['success', 'deferred', 'failed'],
			credentials,
			properties,
		};
	}

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return executeNode.call(this, 2);
	}
}
