/* tslint:disable */
/* eslint-disable */
export const memory: WebAssembly.Memory;
export const __wbg_engine_free: (a: number, b: number) => void;
export const __wbg_item_free: (a: number, b: number) => void;
export const engine_check: (a: number, b: number, c: number, d: number, e: number, f: number, g: number, h: number) => [number, number, number];
export const engine_commits: (a: number, b: number, c: number, d: number) => number;
export const engine_inspect: (a: number, b: number, c: number, d: number) => [number, number, number];
export const engine_item: (a: number, b: number, c: number, d: number, e: number, f: number) => [number, number, number];
export const engine_metrics: (a: number, b: number, c: number, d: number, e: number, f: number, g: number, h: number) => [number, number, number, number];
export const engine_new: (a: any) => [number, number, number];
export const engine_raceLost: (a: number, b: number, c: number, d: number) => [number, number, number];
export const engine_report: (a: number, b: number, c: any, d: number, e: number, f: any, g: number, h: number) => [number, number, number];
export const item_abandon: (a: number, b: number, c: number) => [number, number, number];
export const item_deferNow: (a: number, b: number, c: any) => [number, number, number];
export const item_hedge: (a: number, b: number, c: number, d: number, e: number) => [number, number, number];
export const item_outcome: (a: number, b: number, c: any, d: number) => [number, number, number];
export const item_poll: (a: number, b: number, c: number, d: number) => [number, number, number];
export const item_prefer: (a: number, b: number) => [number, number];
export const item_rerecord: (a: number, b: number, c: number, d: number) => [number, number, number];
export const item_stream: (a: number) => [number, number];
export const __wbindgen_malloc: (a: number, b: number) => number;
export const __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
export const __wbindgen_free: (a: number, b: number, c: number) => void;
export const __wbindgen_exn_store: (a: number) => void;
export const __externref_table_alloc: () => number;
export const __wbindgen_externrefs: WebAssembly.Table;
export const __externref_table_dealloc: (a: number) => void;
export const __wbindgen_start: () => void;
