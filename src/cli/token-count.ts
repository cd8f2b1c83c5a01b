/**
 * Counts tokens the way an LLM would see them, with a real BPE tokenizer
 * (gpt-tokenizer, o200k_base, the GPT-4o encoding), not characters / 4.
 */
import { countTokens as countO200kTokens } from 'gpt-tokenizer';

/** The tokenizer the demo reports with. */
export const TOKENIZER_NAME = 'o200k_base (gpt-tokenizer)';

/** Tokens in `text` under {@link TOKENIZER_NAME}. */
export function countTokens(text: string): number {
  return countO200kTokens(text);
}
