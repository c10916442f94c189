// Call Chain's Answer Check as the plan holds it: the schema compiled once (a bad one is a
// NodeOperationError naming the field), whether LLM presets' finish words and refusals are
// handed to the engine, and whether the engine counts the workflow's own misses.
import type { IDataObject } from 'n8n-workflow';
import type { ChainConfig } from '../engine';
import { readSchema, type AnswerSchema } from '../answerCheck/schema';
import type { Fail } from './fields';

export interface AnswerCheckPlan {
	schema?: AnswerSchema;
	/** Hand an LLM preset's finish word and refusal to the engine (cut, filtered, refused). */
	checkFinish: boolean;
	/** One repair round for an LLM's answer off the schema (the engine's `repairs`). */
	repair: boolean;
}

/** `finishByDefault`: the node's version's default when Fail Over on Cut, Filtered or Refused
 * Answers is not added (a new default comes with a new version: Call Chain 2.1, chat model 1.1). */
export function readAnswerCheck(
	raw: IDataObject,
	finishByDefault: boolean,
	config: ChainConfig,
	fail: Fail,
): AnswerCheckPlan {
	let schema: AnswerSchema | undefined;
	try {
		schema = readSchema(raw.jsonSchema);
	} catch (e) {
		fail(`Answer Check: "JSON Schema" ${(e as Error).message}`);
	}
	if (raw.countAnswerMisses === true) config.count_answer_misses = true;
	const checkFinish = typeof raw.checkFinish === 'boolean' ? raw.checkFinish : finishByDefault;
	return { schema, checkFinish, repair: schema !== undefined && raw.repairRound === true };
}
