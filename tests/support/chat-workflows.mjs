// Workflows around the Resilient Chat Model, built as n8n stores them: a Manual Trigger, items
// from a Set (raw JSON) and a Split Out, a root node (Basic LLM Chain or AI Agent) and its chat
// model sub-nodes (n8n's OpenAI Chat Model on the OpenAI credential whose Base URL is a loopback
// vendor). Used by the end-to-end test and README's example.
export const CHAT_NODE = 'n8n-nodes-resilient-provider-call.resilientChatModel';

/** An n8n credential of `type` named `<kind> <id>`, its id (16 letters and digits, as n8n's)
 * made from `prefix` and `id`. */
const loopbackCredential = (prefix, kind, id, type, data) => ({
	id: `${prefix}${id}`
		.replace(/[^A-Za-z0-9]/g, '')
		.padEnd(16, '0')
		.slice(0, 16),
	name: `${kind} ${id}`,
	type,
	data,
});

/** An n8n OpenAI credential pointed at loopback vendor instance `id`. */
export const openAiCredential = (vendors, id, apiKey) =>
	loopbackCredential('oa', 'openai', id, 'openAiApi', { apiKey, url: `${vendors.url(id)}/v1` });

/** n8n's OpenAI Chat Model on credential `cred` (chat completions, no built-in tools). */
export const openAiModel = (name, cred, position) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
	typeVersion: 1.2,
	position,
	parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
	credentials: { openAiApi: { id: cred.id, name: cred.name } },
});

/** Basic LLM Chain over each item's `q`, one item per batch unless told otherwise. */
export const llmChain = (name, position, extra = {}) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: '@n8n/n8n-nodes-langchain.chainLlm',
	typeVersion: 1.7,
	position,
	parameters: {
		promptType: 'define',
		text: '={{ $json.q }}',
		batching: { batchSize: 1 },
		...extra,
	},
	continueOnFail: true,
});

export const resilientChatModel = (name, parameters, position, nodeType = CHAT_NODE) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: nodeType,
	typeVersion: 1,
	position,
	parameters,
});

/**
 * A Resilient Chat Model at `position` feeding `root`, over the chat model nodes `inputs` (its
 * inputs 0, 1, … in that order): that sub-tree's nodes and `chatWorkflow` model links.
 */
export function resilientOver(name, parameters, position, root, inputs) {
	return {
		nodes: [resilientChatModel(name, parameters, position), ...inputs],
		models: [...inputs.map((input, i) => [input.name, name, i]), [name, root, 0]],
	};
}

/** Start -> n items {q} -> every root in `roots`; `models` wire sub-nodes: [from, to, index,
 * type = ai_languageModel]. */
export function chatWorkflow(id, { items, nodes, roots, models }) {
	const qs = Array.isArray(items)
		? items
		: Array.from({ length: items }, (_, i) => ({ n: i + 1, q: `Question ${i + 1}` }));
	const all = [
		{
			id: 'start',
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		{
			id: 'items',
			name: 'Items',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [200, 0],
			parameters: { mode: 'raw', jsonOutput: JSON.stringify({ items: qs }) },
		},
		{
			id: 'split',
			name: 'Split',
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			position: [400, 0],
			parameters: { fieldToSplitOut: 'items' },
		},
		...nodes,
	];
	const connections = {
		Start: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
		Items: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
		Split: { main: [roots.map((r) => ({ node: r, type: 'main', index: 0 }))] },
	};
	for (const [from, to, index, type = 'ai_languageModel'] of models) {
		connections[from] ??= {};
		connections[from][type] ??= [[]];
		connections[from][type][0].push({ node: to, type, index });
	}
	return {
		id,
		name: id,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: all,
		connections,
	};
}

/** An n8n Anthropic credential pointed at loopback vendor instance `id`. */
export const anthropicCredential = (vendors, id, apiKey) =>
	loopbackCredential('an', 'anthropic', id, 'anthropicApi', { apiKey, url: vendors.url(id) });

/** An n8n Google Gemini (PaLM) credential whose host is loopback vendor instance `id`. */
export const geminiCredential = (vendors, id, apiKey) =>
	loopbackCredential('ge', 'gemini', id, 'googlePalmApi', { apiKey, host: vendors.url(id) });

/** n8n's Google Gemini Chat Model on credential `cred`. */
export const geminiModel = (name, cred, position) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: '@n8n/n8n-nodes-langchain.lmChatGoogleGemini',
	typeVersion: 1,
	position,
	parameters: { modelName: 'models/gemini-2.0-flash', options: {} },
	credentials: { googlePalmApi: { id: cred.id, name: cred.name } },
});

/** n8n's Anthropic Chat Model on credential `cred`. */
export const anthropicModel = (name, cred, position) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: '@n8n/n8n-nodes-langchain.lmChatAnthropic',
	typeVersion: 1.3,
	position,
	parameters: {
		model: { __rl: true, mode: 'list', value: 'claude-sonnet-4-5-20250929' },
		options: {},
	},
	credentials: { anthropicApi: { id: cred.id, name: cred.name } },
});

/** n8n's AI Agent (its newest version on this n8n) over each item's `q`. */
export const aiAgent = (name, position, major) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: '@n8n/n8n-nodes-langchain.agent',
	typeVersion: major === 2 ? 3.1 : 3,
	position,
	parameters: { promptType: 'define', text: '={{ $json.q }}', options: {} },
});

/** n8n's Calculator tool (no network). */
export const calculatorTool = (name, position) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: '@n8n/n8n-nodes-langchain.toolCalculator',
	typeVersion: 1,
	position,
	parameters: {},
});
