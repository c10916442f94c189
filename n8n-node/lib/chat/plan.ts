// The chat model's plan, read by the same code as Call Chain's (readItemPlan): its providers are
// the connected models, in input order, under the names the user gave them; the retry policy,
// breaker and scope parameters are Call Chain's. A model call is a POST with a stable key, so
// the engine may retry it and move on (an LLM answer has no side effect but its cost). A client
// error (a 400/422: a bad request) is the request's, the same on every model: the chain does not
// move on after it (a too-long input keeps its own option, "Try Next Provider When Input Is Too
// Long"). Its calls may stream: the chain carries the first-chunk deadline and the idle limit.
import type { IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';
import { readItemPlan, type ItemPlan } from '../params';

/** Where a connected model sits in the plan's request list: it is never requested over HTTP. */
const modelUrl = (k: number) => `http://connected-model.invalid/model-${k + 1}`;

export function readChatPlan(ctx: ISupplyDataFunctions, names: string[]): ItemPlan {
	const providers = names.map((name, k) => ({ name, method: 'POST', url: modelUrl(k) }));
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
	plan.config.next_provider_on_client_error = false;
	// A chat may stream (when its root node does): the engine then holds its stream limits.
	plan.config.streams = true;
	return plan;
}
