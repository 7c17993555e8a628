import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/scopes.decorator.js';
import { DEBUG_CONSOLE_PAGE } from './debug-console.page.js';

/**
 * The debug console: a static page; the token is typed into it and sent by the page's
 * own requests, so the page itself needs none.
 */
@ApiExcludeController()
@Controller('debug')
export class DebugConsoleController {
  @Get('events')
  @Public()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('x-frame-options', 'DENY')
  page(): string {
    return DEBUG_CONSOLE_PAGE;
  }
}
