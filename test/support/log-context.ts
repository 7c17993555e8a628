import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LogModule, type LogModuleOptions } from '@ordinal/log';

/**
 * The log alone, in a Nest context of its own on a suite's database: no duplicate window,
 * fast polls (50 ms live poll and late re-scan), a pool of 6. `options` override these. A
 * failing start rejects.
 */
export async function startLogContext(
  url: string,
  options: LogModuleOptions = {},
): Promise<INestApplicationContext> {
  @Module({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url, entities: [], extra: { max: 6 } }),
      LogModule.forRoot({
        isGlobal: true,
        duplicateWindow: 0,
        livePollMs: 50,
        lateRescanMs: 50,
        ...options,
      }),
    ],
  })
  class TestLogModule {}
  // A failing start rejects (Nest's default aborts the test's process); createApplicationContext
  // runs init itself
  return NestFactory.createApplicationContext(TestLogModule, {
    logger: false,
    abortOnError: false,
  });
}
