// A batch through Call Chain 2.2 at its defaults over a loopback vendor's OpenAI preset, its
// state on Redis: the scarce-vendor tests' load (chat-beside-batch, fair-share). `model` tells its
// requests apart at the vendor (an expression may set it per item); the provider's name is the
// fleet limit's row; `retryPolicy`: Retry Policy options (a Fair Share Key, its weight).
import { branchesWorkflow } from './n8n.mjs';

export function redisBatch(n8n, id, { provider, model, baseUrl, items, redis, retryPolicy }) {
	const wf = branchesWorkflow(id, n8n.nodeType, [
		{
			name: 'batch',
			items,
			typeVersion: 2.2,
			parameters: {
				providers: {
					provider: [
						{
							name: provider,
							kind: 'openAiChat',
							model,
							userMessage: '={{ "row " + $json.n }}',
							authentication: 'none',
							openAiChatOptions: { baseUrl, maxTokens: 20 },
						},
					],
				},
				...(retryPolicy ? { retryPolicy } : {}),
				stateStore: 'redis',
				stateScope: 'provider',
			},
		},
	]);
	wf.nodes.find((n) => n.name === 'batch').credentials = { redis };
	return wf;
}
