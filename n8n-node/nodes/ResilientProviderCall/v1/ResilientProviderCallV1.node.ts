// Version 1, frozen: its description and behaviour stay as released, so workflows saved with it
// load and run unchanged. Changes go into version 2.
import {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeBaseDescription,
	INodeTypeDescription,
	NodeConnectionTypes,
} from 'n8n-workflow';
import { properties } from './description';
import { executeNode } from '../execute';

export class ResilientProviderCallV1 implements INodeType {
	description: INodeTypeDescription;

	constructor(baseDescription: INodeTypeBaseDescription) {
		this.description = {
			...baseDescription,
			version: 1,
			defaults: { name: 'Resilient Provider Call' },
			usableAsTool: true,
			inputs: [NodeConnectionTypes.Main],
			outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main, NodeConnectionTypes.Main],
			outputNames: ['success', 'deferred', 'failed'],
			credentials: [
				{ name: 'resilientProviderSecretsApi', required: false },
				{ name: 'redis', required: true, displayOptions: { show: { stateStore: ['redis'] } } },
				{
					name: 'postgres',
					required: true,
					displayOptions: { show: { stateStore: ['postgres'] } },
				},
			],
			properties,
		};
	}

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return executeNode.call(this, 1);
	}
}
