// Call Chain's Answer Check as the plan holds it: the schema compiled once (a bad one is a
// NodeOperationError naming the field), whether LLM presets' finish words and refusals are
// handed to the engine, and whether the engine counts the workflow's own misses.
import type { IDataObject } from 'n8n-workflow';
import type { ChainConfig } from '../engine';
import type { VersionDefaults } from './versionDefaults';
import { readSchema, type AnswerSchema } from '../answerCheck/schema';
import type { Fail } from './fields';

export interface AnswerCheckPlan {
	schema?: AnswerSchema;
	/** The engine reads the finish word and a refusal (cut, filtered, refused): its `check_finish`. */
	checkFinish: boolean;
	/** The engine fails an empty answer (its `check_empty`); off, version 2.0's presets keep their
	 * own `empty_text` check. */
	checkEmpty: boolean;
	/** One repair round for an LLM's answer off the schema (the engine's `repairs`). */
	repair: boolean;
}

/** `defaults`: the node version's, where Fail Over on Cut, Filtered or Refused Answers is not
 * added. The checks are the engine's switches; the answer's facts are always handed over. */
export function readAnswerCheck(
	raw: IDataObject,
	defaults: VersionDefaults,
	config: ChainConfig,
	fail: Fail,
): AnswerCheckPlan {
	let schema: AnswerSchema | undefined;
	try {
		schema = readSchema(raw.jsonSchema);
	} catch (e) {
		fail(`Answer Check: "JSON Schema" ${(e as Error).message}`);
	}
	// The user's switch as set (the engine's own default where it is not added).
	if (typeof raw.countAnswerMisses === 'boolean')
		config.count_answer_misses = raw.countAnswerMisses;
	const checkFinish =
		typeof raw.checkFinish === 'boolean' ? raw.checkFinish : defaults.check_finish;
	// Before its version checked empty answers, a node checked them where it checked anything.
	const checkEmpty = defaults.check_empty || checkFinish || schema !== undefined;
	config.check_finish = checkFinish;
	config.check_empty = checkEmpty;
	return {
		schema,
		checkFinish,
		checkEmpty,
		repair: schema !== undefined && raw.repairRound === true,
	};
}
