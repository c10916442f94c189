// The chat model's plan, read by the same code as Call Chain's (readItemPlan): its providers are
// the connected models, in input order, under the names the user gave them; the retry policy,
// breaker and scope parameters are Call Chain's. A model call is a POST that says it is
// idempotent (an LLM answer has no side effect but its cost), so the engine may retry it and move
// on without an Idempotency-Key; none is made or sent. A client
// error (a 400/422: a bad request) is the request's, the same on every model: the chain does not
// move on after it (a too-long input keeps its own option, "Try Next Provider When Input Is Too
// Long"); a retryable failure moves on at once to a model that can take the call (Fail Over
// First); its calls may stream (when its root node does). These are the chat model's column of
// the engine's defaults table (CHAT_OVERRIDES), given to the engine where the user set nothing.
import {
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type ISupplyDataFunctions,
} from 'n8n-workflow';
import { readAnswerCheck } from '../plan/answerCheck';
import { forVersion, versionDefaults } from '../plan/versionDefaults';
import { CHAT_OVERRIDES } from '../engineConstants';
import { readItemPlan, type ItemPlan } from '../params';
import type { Connected } from './connected';

/** Where a connected model sits in the plan's request list: it is never requested over HTTP. */
const modelUrl = (k: number) => `http://connected-model.invalid/model-${k + 1}`;

export function readChatPlan(
	ctx: ISupplyDataFunctions,
	names: string[],
	routing: Connected['routing'] = [],
): ItemPlan {
	const providers = names.map((name, k) => ({
		name,
		method: 'POST',
		url: modelUrl(k),
		...routing[k],
	}));
	const view = {
		getNode: () => ctx.getNode(),
		getWorkflow: () => ctx.getWorkflow(),
		getInputData: () => [{ json: {} }],
		getNodeParameter: (name: string, i: number, fallback?: unknown) => {
			if (name === 'providers.provider') return providers;
			if (name === 'onExhaustion') return 'deferred';
			return ctx.getNodeParameter(name, i, fallback as never);
		},
	};
	const plan = readItemPlan(view as unknown as IExecuteFunctions, 0);
	const config = { ...CHAT_OVERRIDES, ...plan.config };
	config.providers = config.providers.map((p) => ({ ...p, idempotent: true }));
	const defaults = versionDefaults('chatModel', ctx.getNode().typeVersion);
	// On a Broken Stream (from 1.1; 1.0 has no such parameter and keeps its own default): Continue
	// or End With an Error.
	const onBroken = ctx.getNodeParameter(
		'onBrokenStream',
		0,
		defaults.continue_broken_streams ? 'continue' : 'error',
	);
	if (onBroken !== 'continue' && onBroken !== 'error')
		throw new NodeOperationError(
			ctx.getNode(),
			`"On a Broken Stream" must be continue or error, got ${JSON.stringify(String(onBroken).slice(0, 50))}`,
		);
	config.continue_broken_streams = onBroken === 'continue';
	forVersion(config, 'chatModel', ctx.getNode().typeVersion, ctx.getWorkflow().id);
	// Answer Check: the version's checks (1.1: empty, cut, filtered, refused answers move on).
	const answerCheck = readAnswerCheck(
		ctx.getNodeParameter('answerCheck', 0, {}) as IDataObject,
		defaults,
		config,
		(message) => {
			throw new NodeOperationError(ctx.getNode(), message);
		},
	);
	if (answerCheck.repair) config.providers = config.providers.map((p) => ({ ...p, repairs: true }));
	return { ...plan, config, keys: plan.requests.map(() => null), answerCheck };
}
