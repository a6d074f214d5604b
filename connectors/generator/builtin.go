package generator

// Templates are the built-in templates of schema_template, with the shapes Google's Streaming
// Data Generator documents for them.
var Templates = map[string]string{
	// GAME_EVENT is an event of a mobile game.
	"GAME_EVENT": `{
  "eventId": "{{uuid()}}",
  "eventTimestamp": {{timestamp()}},
  "ipv4": "{{ipv4()}}",
  "ipv6": "{{ipv6()}}",
  "country": "{{country()}}",
  "username": "{{username()}}",
  "quest": "{{random("A Break In the Ice", "Ghosts of Perdition", "Survive the Low Road")}}",
  "score": {{integer(100, 10000)}},
  "completed": {{bool()}}
}`,
	// LOG_ENTRY is a Cloud Logging entry of a VPC flow log.
	"LOG_ENTRY": `{
  "logName": "{{alpha(10, 20)}}",
  "resource": {
    "type": "{{alpha(5, 10)}}"
  },
  "timestamp": {{timestamp()}},
  "receiveTimestamp": {{timestamp()}},
  "severity": "{{random("DEFAULT", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL")}}",
  "insertId": "{{uuid()}}",
  "trace": "{{uuid()}}",
  "spanId": "{{uuid()}}",
  "jsonPayload": {
    "bytes_sent": {{integer(1000, 20000)}},
    "connection": {
      "dest_ip": "{{ipv4()}}",
      "dest_port": {{integer(0, 65000)}},
      "protocol": {{integer(0, 6)}},
      "src_ip": "{{ipv4()}}",
      "src_port": {{integer(0, 65000)}}
    },
    "dest_instance": {
      "project_id": "{{concat("PROJECT", integer(0, 3))}}",
      "region": "{{country()}}",
      "vm_name": "{{username()}}",
      "zone": "{{state()}}"
    },
    "end_time": {{timestamp()}},
    "packets_sent": {{integer(100, 400)}},
    "reporter": "{{random("SRC", "DEST")}}",
    "rtt_msec": {{integer(0, 20)}},
    "start_time": {{timestamp()}}
  }
}`,
}
