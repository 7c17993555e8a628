/** The flags every server command takes, wherever they stand on the line. */
const CONNECTION_FLAGS = ['--url', '--token', '--tenant'];

/**
 * Takes `--url U`, `--token T` and `--tenant ID` (or `--url=U`, …) out of `args` wherever they stand,
 * before the command's name included (`ordinal --url U status`), and returns them apart, to be
 * handed to the command after its own words. Nothing after a `--` is touched.
 */
export function splitConnectionFlags(args: string[]): { words: string[]; flags: string[] } {
  const words: string[] = [];
  const flags: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') {
      words.push(...args.slice(i));
      break;
    }
    if (CONNECTION_FLAGS.some((flag) => arg.startsWith(`${flag}=`))) {
      flags.push(arg);
    } else if (CONNECTION_FLAGS.includes(arg) && i + 1 < args.length) {
      flags.push(arg, args[++i]);
    } else {
      words.push(arg);
    }
  }
  return { words, flags };
}

/** The value of `--url` among connection flags, if given. */
export function urlFlag(flags: string[]): string | undefined {
  let url: string | undefined;
  for (let i = 0; i < flags.length; i++) {
    if (flags[i] === '--url') url = flags[++i];
    else if (flags[i].startsWith('--url=')) url = flags[i].slice('--url='.length);
    else if (flags[i] === '--token' || flags[i] === '--tenant') i++;
  }
  return url;
}
