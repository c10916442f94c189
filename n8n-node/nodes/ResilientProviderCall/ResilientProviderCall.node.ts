// The node, versioned as n8n's own nodes are (VersionedNodeType): version 1 is frozen (workflows
// saved with it load and run unchanged), version 2 is the lean panel with n8n credentials and LLM
// presets. New operations go into the newest version only.
import { VersionedNodeType, type INodeTypeBaseDescription } from 'n8n-workflow';
import { ResilientProviderCallV1 } from './v1/ResilientProviderCallV1.node';
import { ResilientProviderCallV2 } from './v2/ResilientProviderCallV2.node';

export class ResilientProviderCall extends VersionedNodeType {
	constructor() {
		const baseDescription: INodeTypeBaseDescription = {
			displayName: 'Resilient Provider Call',
			name: 'resilientProviderCall',
			icon: {
				light: 'file:resilientProviderCall.svg',
				dark: 'file:resilientProviderCall.dark.svg',
			},
			group: ['transform'],
			subtitle: '={{$parameter["operation"]}}',
			description:
				'Call a fallback chain of flaky providers: jittered retries, Retry-After, shared cooldown and breaker, deferred output',
			defaultVersion: 2.2,
		};
		const v2 = new ResilientProviderCallV2(baseDescription);
		super(
			{
				1: new ResilientProviderCallV1(baseDescription),
				2: v2,
				2.1: v2,
				2.2: v2,
			},
			baseDescription,
		);
	}
}
