export { takeBatch, type QueueName } from "../../machines/session.helpers.js";
