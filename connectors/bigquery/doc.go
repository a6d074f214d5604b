// Package bigquery implements WriteToBigQuery over the BigQuery Storage Write API.
package bigquery
