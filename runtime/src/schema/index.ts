export { ContextSchema, type SchemaClass } from './context-schema.js';
export type {
  IntrospectedSchema,
  JsonSchemaFragment,
  MaskedOutput,
  ParseMode,
  ParsedBody,
  RelationSpec,
  SchemaDefinition,
  SchemaInput,
  SchemaOutput,
  SchemaPatch,
  Serializer,
} from './types.js';
