import { Column, Entity, PrimaryColumn } from 'typeorm';

/** ACME's dashboard read model: one row per order (register it in the DataSource's entities). */
@Entity('acme_order_dashboard')
export class OrderDashboardRow {
  @PrimaryColumn('text', { name: 'order_id' })
  orderId: string;

  @Column('text')
  customer: string;

  @Column('int', { default: 0 })
  items: number;

  @Column('numeric', {
    default: 0,
    transformer: { to: (v: number) => v, from: (v: string) => Number(v) },
  })
  total: number;

  @Column('boolean', { default: false })
  shipped: boolean;

  /** The index of the last event applied to the row. */
  @Column('bigint', {
    name: 'last_index',
    transformer: { to: (v: number) => v, from: (v: string) => Number(v) },
  })
  lastIndex: number;
}
