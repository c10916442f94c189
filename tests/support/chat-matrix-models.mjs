// The chat-model matrix's nodes (issue 28), one table for every test that runs them: per model
// node, its type, version per major, the credential pointed at a vendor instance's base URL and
// the node's parameters. `byModel`: the client's base URL is process-wide (Groq's
// GROQ_BASE_URL), so the vendor tells its instances apart by the request's model (the instance's
// id); `elsewhere`: why a node is not run on the majors it lacks.
const LC = '@n8n/n8n-nodes-langchain';

/** `keys`: the vendors' keys (openai, gemini, ollama, azure, aws); `tag`: the run's own tag. */
export function matrixModels(keys, tag) {
	/** An OpenAI-compatible node whose credential has a `url` (its base URL, /v1 included). */
	const compatible = (type, credType, model, majors = [1, 2]) => ({
		type: `${LC}.${type}`,
		version: { 1: 1, 2: 1 },
		majors,
		cred: (url) => ({ type: credType, data: { apiKey: keys.openai, url: `${url}/v1` } }),
		parameters: () => ({ model, options: {} }),
		dialect: 'openai',
	});
	return {
		gemini: {
			type: `${LC}.lmChatGoogleGemini`,
			// 1.1 and 1.2 exist in n8n 2 only.
			version: { 1: 1, 2: 1 },
			majors: [1, 2],
			cred: (url) => ({ type: 'googlePalmApi', data: { apiKey: keys.gemini, host: url } }),
			parameters: () => ({ modelName: 'models/gemini-2.0-flash', options: {} }),
			dialect: 'gemini',
		},
		ollama: {
			type: `${LC}.lmChatOllama`,
			version: { 1: 1, 2: 1 },
			majors: [1, 2],
			cred: (url) => ({ type: 'ollamaApi', data: { baseUrl: url, apiKey: keys.ollama } }),
			parameters: () => ({ model: 'llama3.2:latest', options: {} }),
			dialect: 'ollama',
		},
		openRouter: compatible('lmChatOpenRouter', 'openRouterApi', 'openai/gpt-4o-mini'),
		deepSeek: compatible('lmChatDeepSeek', 'deepSeekApi', 'deepseek-chat'),
		xAiGrok: compatible('lmChatXAiGrok', 'xAiApi', 'grok-3-mini'),
		vercelAiGateway: compatible(
			'lmChatVercelAiGateway',
			'vercelAiGatewayApi',
			'openai/gpt-4o-mini',
		),
		lemonade: {
			...compatible('lmChatLemonade', 'lemonadeApi', 'Llama-3.2-1B-Instruct-Hybrid'),
			cred: (url) => ({ type: 'lemonadeApi', data: { baseUrl: `${url}/v1`, apiKey: keys.openai } }),
		},
		nvidia: compatible('lmChatNvidia', 'nvidiaApi', 'meta/llama-3.1-8b-instruct', [2]),
		moonshot: compatible('lmChatMoonshot', 'moonshotApi', 'kimi-k2-0711-preview', [2]),
		minimax: compatible('lmChatMinimax', 'minimaxApi', 'MiniMax-M2', [2]),
		groq: {
			type: `${LC}.lmChatGroq`,
			version: { 1: 1, 2: 1 },
			majors: [1, 2],
			byModel: true,
			cred: () => ({ type: 'groqApi', data: { apiKey: keys.openai } }),
			parameters: (id) => ({ model: id, options: {} }),
			dialect: 'openai',
		},
		bedrock: {
			type: `${LC}.lmChatAwsBedrock`,
			version: { 2: 1.2 },
			majors: [2],
			elsewhere:
				"n8n 1's AWS credential has no Bedrock Runtime Endpoint (the client always calls AWS): not proven there",
			cred: (url) => ({
				type: 'aws',
				data: {
					region: 'us-east-1',
					accessKeyId: keys.aws,
					secretAccessKey: `secret-${tag}`,
					customEndpoints: true,
					bedrockRuntimeEndpoint: url,
				},
			}),
			parameters: () => ({ model: 'anthropic.claude-3-haiku-20240307-v1:0', options: {} }),
			dialect: 'bedrock',
		},
		azure: {
			type: `${LC}.lmChatAzureOpenAi`,
			version: { 1: 1, 2: 1 },
			majors: [1, 2],
			cred: (url) => ({
				type: 'azureOpenAiApi',
				data: {
					endpointType: 'classic',
					apiKey: keys.azure,
					resourceName: 'unused-resource',
					apiVersion: '2025-03-01-preview',
					endpoint: url,
				},
			}),
			parameters: () => ({ authentication: 'azureOpenAiApi', model: 'gpt-4o-mini', options: {} }),
			dialect: 'azure',
		},
	};
}
