import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { InterfaceConfigError } from '../errors/index.js';
import { parseInterfaces, type ResolvedInterfaceConfig } from './interface-config.js';

/**
 * Reads the interface file named by ORDINAL_INTERFACES: JSON (`.json`) or YAML (anything
 * else; YAML also reads JSON). Throws an InterfaceConfigError saying what is wrong.
 */
export function loadInterfacesFile(path: string): ResolvedInterfaceConfig[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InterfaceConfigError(
      `Cannot read the interface file ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return parseInterfacesText(text, path);
}

/** Parses the text of an interface file; `source` names it in errors. */
export function parseInterfacesText(
  text: string,
  source = 'interfaces',
): ResolvedInterfaceConfig[] {
  let raw: unknown;
  try {
    raw = source.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new InterfaceConfigError(
      `The interface file ${source} is not valid ${source.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  try {
    return parseInterfaces(raw ?? []);
  } catch (error) {
    if (error instanceof InterfaceConfigError)
      throw new InterfaceConfigError(`${source}: ${error.message}`);
    throw error;
  }
}
