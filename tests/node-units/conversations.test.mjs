// An agent's rounds are one conversation: the calls that resend its opening (system prompt and
// first human message) with tool calls and results after it. The model that served its last
// call is remembered per execution, for the engine to try first; the memory is bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { n8nInstall } from '../support/n8n.mjs';
import { n8nRequire } from '../chat/support.mjs';

const require = createRequire(import.meta.url);
const {
	Conversations,
	conversationsOf,
	CONVERSATIONS_KEPT,
	EXECUTIONS_KEPT,
} = require('../../dist/lib/chat/conversations.js');
const { HumanMessage, SystemMessage, AIMessage, ToolMessage } = n8nRequire(n8nInstall(2))(
	'@langchain/core/messages',
);

const opening = (q) => [new SystemMessage('You are a helpful assistant'), new HumanMessage(q)];

test("a conversation's later round finds the model of its first; another conversation does not", () => {
	const c = new Conversations();
	c.remember(opening('What is 6 times 7? (1)'), 1);
	const round2 = [
		...opening('What is 6 times 7? (1)'),
		new AIMessage({
			content: '',
			tool_calls: [{ id: 't1', name: 'calculator', args: { input: '6*7' } }],
		}),
		new ToolMessage({ content: '42', tool_call_id: 't1' }),
	];
	assert.equal(c.servedBy(round2), 1);
	assert.equal(c.servedBy(opening('What is 6 times 7? (2)')), undefined);
});

test('the memory is bounded: conversations per execution, executions per process', () => {
	const c = new Conversations();
	for (let k = 0; k <= CONVERSATIONS_KEPT; k++) c.remember(opening(`q${k}`), 0);
	assert.equal(c.servedBy(opening('q0')), undefined, 'the oldest conversation went');
	assert.equal(c.servedBy(opening(`q${CONVERSATIONS_KEPT}`)), 0);
	const first = conversationsOf('exec-0');
	first.remember(opening('q'), 1);
	assert.equal(
		conversationsOf('exec-0'),
		first,
		'one memory per execution, across sub-node instances',
	);
	for (let k = 1; k <= EXECUTIONS_KEPT; k++) conversationsOf(`exec-${k}`);
	assert.notEqual(conversationsOf('exec-0'), first, 'the oldest execution went');
});
