import { CreateInterfaceBookmarks1765100000000 } from './1765100000000-create-interface-bookmarks.js';
import { AmqpSchemaComments1765100000001 } from './1765100000001-schema-comments.js';
import { BookmarkLateOwedSince1765100000100 } from './1765100000100-bookmark-late-owed-since.js';

/** This library's migrations, in order. */
export const AMQP_MIGRATIONS = [
  CreateInterfaceBookmarks1765100000000,
  AmqpSchemaComments1765100000001,
  BookmarkLateOwedSince1765100000100,
];
