import { CreateInterfaceBookmarks1765100000000 } from './1765100000000-create-interface-bookmarks.js';

/** This library's migrations, in order. */
export const AMQP_MIGRATIONS = [CreateInterfaceBookmarks1765100000000];
