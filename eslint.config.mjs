// n8n's community-node lint (@n8n/node-cli's shipped config) over this repository's layout: its
// node and credential rule sets are written for ./nodes and ./credentials; ours live in n8n-node/.
// The self-hosted variant (configWithoutCloudSupport): this package is not meant for n8n Cloud.
import { configWithoutCloudSupport } from '@n8n/node-cli/eslint';

const pointed = configWithoutCloudSupport.map((block) =>
	block.files
		? {
				...block,
				files: block.files.map((f) =>
					typeof f === 'string' ? f.replace(/^\.\/(nodes|credentials)\//, 'n8n-node/$1/') : f,
				),
			}
		: block,
);

export default [
	// Generated (wasm-pack, tsc) or not the package's TypeScript.
	{
		ignores: [
			'pkg/**',
			'dist/**',
			'target/**',
			'fuzz/**',
			'node_modules/**',
			'tests/**',
			'scripts/**',
		],
	},
	...pointed,
	{
		files: ['package.json'],
		rules: {
			// ioredis and pg are runtime dependencies on purpose: the shared Redis and Postgres stores.
			// n8n installs the dependencies of unverified (self-hosted) community packages.
			'@n8n/community-nodes/no-runtime-dependencies': 'off',
			// The Resilient Chat Model subclasses LangChain's BaseChatModel: @langchain/core must be
			// n8n's own copy (found through n8n's NODE_PATH), never one installed with this package.
			// n8n's installer drops peer dependencies, so the peer entry only states the contract.
			'@n8n/community-nodes/valid-peer-dependencies': 'off',
		},
	},
	{
		files: ['n8n-node/**/*.ts'],
		rules: {
			// The stores use n8n's built-in Redis and Postgres credentials so users reuse the ones they
			// already have (fields listed in README); allowed for self-hosted packages.
			'@n8n/community-nodes/no-credential-reuse': 'off',
			// The same built-in credentials are named `redis` and `postgres` by n8n, without `-Api`.
			'n8n-nodes-base/node-class-description-credentials-name-unsuffixed': 'off',
			// It flags re-throwing an error already narrowed to NodeOperationError, and the internal
			// signals (Cancelled, StoreUnavailable, a store's re-throw after ROLLBACK) that the node
			// turns into NodeOperationError at its boundary (ResilientProviderCall/execute.ts).
			'@n8n/community-nodes/require-node-api-error': 'off',
			// Title case would misname "(ms)" units, the reason code store_unavailable, "n8n", and a
			// notice that is a sentence.
			'n8n-nodes-base/node-param-display-name-miscased': 'off',
			// "Secret Name" and "Secret Header" hold the name of a secret and a header name; the
			// secret values live in the credential, which masks them.
			'n8n-nodes-base/node-param-type-options-password-missing': 'off',
		},
	},
	{
		files: [
			'n8n-node/nodes/ResilientProviderCall/v1/description.ts',
			'n8n-node/nodes/ResilientProviderCall/v2/policy.ts',
			'n8n-node/nodes/ResilientProviderCall/v2/providerOptions.ts',
			'n8n-node/nodes/ResilientProviderCall/v2/store.ts',
			'n8n-node/nodes/storeDescription.ts',
		],
		rules: {
			// Engine settings take their defaults from the engine's one defaults table
			// (ENGINE_DEFAULTS, generated from src/config/mod.rs), the stores' from STORE_DEFAULTS beside
			// it, a preset's Base URL from its vendor's constant; the rule sees only literals.
			// tests/node-units/defaults.test.mjs checks that every one is set and equals the engine's.
			'n8n-nodes-base/node-param-default-missing': 'off',
		},
	},
	{
		files: ['n8n-node/nodes/ResilientProviderCall/v*/ResilientProviderCallV*.node.ts'],
		rules: {
			// A version's description spreads the base description, which names the icon (as n8n's
			// own versioned nodes do; n8n resolves it against ResilientProviderCall.node.ts).
			'@n8n/community-nodes/icon-validation': 'off',
		},
	},
	{
		files: ['n8n-node/credentials/**/*.ts'],
		rules: {
			// One credential carries the keys of every provider in a chain; there is no single
			// endpoint to test it against (each provider's answer shows a wrong key).
			'@n8n/community-nodes/credential-test-required': 'off',
			// It holds secrets for many providers' APIs, not one API: "Resilient Provider Secrets".
			'n8n-nodes-base/cred-class-field-display-name-missing-api': 'off',
		},
	},
];
