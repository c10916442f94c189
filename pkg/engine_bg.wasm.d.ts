/* tslint:disable */
/* eslint-disable */
export const memory: WebAssembly.Memory;
export const __wbg_engine_free: (a: number, b: number) => void;
export const __wbg_item_free: (a: number, b: number) => void;
export const backoffDelay: (a: number, b: number, c: number, d: number, e: number, f: number) => [number, number, number];
export const engine_admit: (a: number, b: number, c: any, d: number, e: number, f: number) => [number, number, number];
export const engine_gateTake: (a: number, b: number, c: any, d: number, e: number) => [number, number, number];
export const engine_item: (a: number, b: number, c: number, d: number, e: any) => [number, number, number];
export const engine_new: (a: any) => [number, number, number];
export const engine_record: (a: number, b: any, c: any, d: number) => [number, number, number];
export const engine_resolved: (a: number) => [number, number, number];
export const gateClose: (a: any, b: number) => [number, number, number];
export const item_counters: (a: number) => [number, number, number];
export const item_deferNow: (a: number, b: number, c: any) => [number, number, number];
export const item_finished: (a: number) => [number, number, number];
export const item_onOutcome: (a: number, b: number, c: any, d: number) => [number, number, number];
export const item_poll: (a: number, b: number, c: any) => [number, number, number];
export const item_report: (a: number) => [number, number, number];
export const seedRandom: (a: number) => void;
export const serverHint: (a: number, b: any, c: number) => [number, number, number];
export const __wbindgen_malloc: (a: number, b: number) => number;
export const __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
export const __wbindgen_free: (a: number, b: number, c: number) => void;
export const __wbindgen_exn_store: (a: number) => void;
export const __externref_table_alloc: () => number;
export const __wbindgen_externrefs: WebAssembly.Table;
export const __externref_table_dealloc: (a: number) => void;
export const __wbindgen_start: () => void;
