// n8n's own credentials, per provider. A node's credential slots are fixed in its description,
// one credential per type, so a top-level multi-select (Credential Types Used) shows one picker
// per chosen type, and each provider row picks one of those types under Authentication.
import type { INodeCredentialDescription, INodeProperties } from 'n8n-workflow';
import { CREDENTIAL_TYPES } from '../../../lib/auth';
import { storeCredentials } from '../../storeDescription';

const CALL_CHAIN = { show: { operation: ['callChain'] } };

export const credentialTypesUsed: INodeProperties[] = [
	{
		displayName: 'Credential Types Used',
		name: 'credentialTypes',
		type: 'multiOptions',
		// The credential slots are chosen in the editor; an expression could not choose them.
		noDataExpression: true,
		default: [],
		// `none` opens no picker. It is also what keeps this field visible: n8n's editor takes a
		// field every one of whose values opens a credential for the node's main authentication
		// field, and hides it together with the fields it depends on (Operation).
		options: [
			{
				name: 'None',
				value: 'none',
				description: 'Providers that need no n8n credential (public, or keys in Secrets (JSON))',
			},
			...CREDENTIAL_TYPES.map((t) => ({ name: t.displayName, value: t.name })),
		],
		description:
			'The n8n credential types your providers authenticate with; one credential of each type can be picked above. Each provider then chooses one of them under Authentication.',
		displayOptions: CALL_CHAIN,
	},
	{
		displayName:
			'Two providers that need two keys of the same type (e.g. two OpenAI accounts): put the keys in one Resilient Provider Secrets credential and pick "Secrets (JSON)" with a secret name in each provider',
		name: 'secretsNotice',
		type: 'notice',
		default: '',
		displayOptions: CALL_CHAIN,
	},
];

export const credentials: INodeCredentialDescription[] = [
	{ name: 'resilientProviderSecretsApi', required: false, displayOptions: CALL_CHAIN },
	...CREDENTIAL_TYPES.map((t) => ({
		name: t.name,
		required: true,
		displayOptions: { show: { credentialTypes: [t.name] } },
	})),
	...storeCredentials,
];
