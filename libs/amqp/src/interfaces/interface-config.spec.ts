import { InterfaceConfigError } from '../errors/index.js';
import { parseInterfacesText } from './interface-config.loader.js';

describe('interface configuration (P1)', () => {
  it('reads JSON and applies the defaults', () => {
    // Given a JSON file with one replayable and one realtime interface
    const text = JSON.stringify({
      interfaces: [
        { name: 'billing', type: 'replayable', includeTypes: ['OrderPlaced'] },
        { name: 'notify', type: 'realtime', ackBatch: 5 },
      ],
    });
    // When it is parsed
    const interfaces = parseInterfacesText(text, 'interfaces.json');
    // Then ackBatch defaults to 1000 and includeTypes to every type
    expect(interfaces).toEqual([
      { name: 'billing', type: 'replayable', includeTypes: ['OrderPlaced'], ackBatch: 1000 },
      { name: 'notify', type: 'realtime', includeTypes: [], ackBatch: 5 },
    ]);
  });

  it('reads YAML', () => {
    // Given a YAML file
    const text =
      'interfaces:\n  - name: billing\n    type: replayable\n    includeTypes: [OrderPlaced, OrderCancelled]\n    ackBatch: 5\n';
    // When it is parsed
    // Then it gives the same structure
    expect(parseInterfacesText(text, 'interfaces.yaml')).toEqual([
      {
        name: 'billing',
        type: 'replayable',
        includeTypes: ['OrderPlaced', 'OrderCancelled'],
        ackBatch: 5,
      },
    ]);
  });

  it.each([
    ['{"interfaces": [{"type": "replayable"}]}', /interfaces\[0\]\.name/],
    ['{"interfaces": [{"name": "a", "type": "push"}]}', /type must be/],
    [
      '{"interfaces": [{"name": "a", "type": "realtime"}, {"name": "a", "type": "realtime"}]}',
      /used twice/,
    ],
    ['{"interfaces": [{"name": "a", "type": "replayable", "ackBatch": 0}]}', /ackBatch/],
    ['{"interfaces": [{"name": "a b", "type": "replayable"}]}', /name must be/],
    ['{"interfaces": [{"name": "a", "type": "replayable", "includeTypes": "X"}]}', /includeTypes/],
    ['{"interfaces": 3}', /must be/],
    ['{not json', /not valid JSON/],
  ])('refuses %s', (text, message) => {
    // Given a malformed file
    // When it is parsed
    // Then it fails naming the problem
    expect(() => parseInterfacesText(text, 'bad.json')).toThrow(InterfaceConfigError);
    expect(() => parseInterfacesText(text, 'bad.json')).toThrow(message);
  });
});
