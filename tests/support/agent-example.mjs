// README's AI Agent example (n8n-node/examples/resilient-chat-model-agent.json) as a user has it
// after importing it into the editor's n8n and picking credentials: an OpenAI and an Anthropic
// credential created over REST with their Base URL on loopback vendor instances, chosen in the
// two chat models. Used by the screenshot script and the browser test.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './n8n.mjs';
import { tempDir } from './tmp.mjs';

export const AGENT_EXAMPLE = path.join(ROOT, 'n8n-node/examples/resilient-chat-model-agent.json');
export const AGENT_MODEL = 'Resilient Chat Model';

/** The example file with credentials on vendor instances `ids.openai` and `ids.anthropic`. */
export async function agentExampleFile(n8n, vendors, keys, ids) {
	const openAi = { name: 'OpenAI (agent)', type: 'openAiApi' };
	openAi.id = await n8n.credential(openAi.name, openAi.type, {
		apiKey: keys.openai,
		url: `${vendors.url(ids.openai)}/v1`,
	});
	const anthropic = { name: 'Anthropic (agent)', type: 'anthropicApi' };
	anthropic.id = await n8n.credential(anthropic.name, anthropic.type, {
		apiKey: keys.anthropic,
		url: vendors.url(ids.anthropic),
	});
	const wf = JSON.parse(readFileSync(AGENT_EXAMPLE, 'utf8'));
	const node = (name) => wf.nodes.find((n) => n.name === name);
	node('OpenAI Chat Model').credentials.openAiApi = { id: openAi.id, name: openAi.name };
	node('Anthropic Chat Model').credentials.anthropicApi = {
		id: anthropic.id,
		name: anthropic.name,
	};
	const file = path.join(tempDir('rpc-agent-example-'), 'resilient-chat-model-agent.json');
	writeFileSync(file, JSON.stringify(wf));
	return file;
}
