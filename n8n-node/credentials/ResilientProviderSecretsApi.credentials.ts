// Named secrets for the providers of a chain. A node holds one credential per type, so one
// credential carries every provider's key; each provider names the secret it sends.
import type { ICredentialType, Icon, INodeProperties } from 'n8n-workflow';

export class ResilientProviderSecretsApi implements ICredentialType {
	name = 'resilientProviderSecretsApi';
	displayName = 'Resilient Provider Secrets';
	icon: Icon = {
		light: 'file:resilientProviderSecrets.svg',
		dark: 'file:resilientProviderSecrets.dark.svg',
	};
	documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-resilient-provider-call';
	properties: INodeProperties[] = [
		{
			displayName: 'Secrets (JSON)',
			name: 'secrets',
			type: 'string',
			typeOptions: { password: true, rows: 4 },
			default: '',
			placeholder: '{"openai": "Bearer sk-...", "anthropic": "sk-ant-..."}',
			description:
				'A JSON object: secret name -> header value. A provider with Secret Name "openai" sends that value in its Secret Header.',
		},
	];
}
