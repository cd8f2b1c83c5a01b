/**
 * Counts tokens the way an LLM would see them, with a real BPE tokenizer
 * (gpt-tokenizer, o200k_base, the GPT-4o encoding), not characters / 4.
 * gpt-tokenizer is an optional package (optional-package.ts), loaded here on
 * first use.
 */
import { importOptional } from '../optional-package.js';

/** The tokenizer the demo reports with. */
export const TOKENIZER_NAME = 'o200k_base (gpt-tokenizer)';

/** Tokens in a text under {@link TOKENIZER_NAME}. */
export type TokenCounter = (text: string) => number;

/**
 * Loads the tokenizer.
 * @throws S2SPError `S2SP_ERR_CLI_PACKAGE_MISSING` when gpt-tokenizer is not installed
 */
export async function loadTokenCounter(): Promise<TokenCounter> {
  const { countTokens } = await importOptional<typeof import('gpt-tokenizer')>('gpt-tokenizer');
  return (text) => countTokens(text);
}
