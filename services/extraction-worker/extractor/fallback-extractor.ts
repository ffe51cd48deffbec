import type { ExtractLlmConfig } from '../../../shared/config/config';
import type { Logger } from '../../../shared/logging/logger';
import type { ExtractionInput, ExtractionResult, Extractor } from './extractor';
import { LlmExtractor } from './llm-extractor';

/**
 * Tries the primary extractor and answers with the fallback when it fails or times out,
 * so a model outage costs accuracy, never an extraction.
 */
class FallbackExtractor implements Extractor {
  readonly name: string;

  constructor(
    private readonly primary: Extractor,
    private readonly fallback: Extractor,
    private readonly logger: Logger,
  ) {
    this.name = `${primary.name}+${fallback.name}`;
  }

  async extract(input: ExtractionInput): Promise<ExtractionResult> {
    try {
      return await this.primary.extract(input);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, extractor: this.primary.name }, `extractor failed; answering with ${this.fallback.name}`);
      return this.fallback.extract(input);
    }
  }
}

/** The rules alone by default; the model first (the rules behind it) when EXTRACT_LLM_URL is set. */
export function extractorFor(llm: ExtractLlmConfig | null, rules: Extractor, logger: Logger): Extractor {
  return llm ? new FallbackExtractor(new LlmExtractor(llm), rules, logger) : rules;
}
